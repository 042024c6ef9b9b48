// Hover speedscope's left-heavy flame graph in headless Chromium, column
// by column, and print what its tooltip says of each frame found: the frame's
// name and the file:line the export gave it ("NAME<TAB>FILE<TAB>LINE").
//   node ss_hover.js CHROMIUM URL [MAX]
'use strict';
const { chromium } = require('playwright-core');

const [exe, url, max] = process.argv.slice(2);

(async () => {
	const b = await chromium.launch({
		executablePath: exe,
		args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
	});
	const found = new Map();
	try {
		const page = await b.newPage({ viewport: { width: 1400, height: 900 } });
		await page.goto(url + '&view=left-heavy');
		await page.waitForFunction(() => document.querySelector('canvas'), null, { timeout: 30000 });
		// the tooltip: "1.93s (>99%) NAME" then "FILE:LINE"
		// left-heavy: the heaviest stack is the leftmost, a frame a row
		for (let x = 20; x < 1400 && found.size < Number(max || 3); x += 100)
			for (let y = 60; y < 900 && found.size < Number(max || 3); y += 16) {
				await page.mouse.move(x, y);
				const t = await page.evaluate(() => document.body.innerText);
				for (const m of t.matchAll(/\)\s+([^\n]+)\n([^\n:]+):(\d+)/g))
					found.set(m[1], `${m[1]}\t${m[2]}\t${m[3]}`);
			}
	} finally {
		await b.close();
	}
	for (const v of found.values()) console.log(v);
})();
