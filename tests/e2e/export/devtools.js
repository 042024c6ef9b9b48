// Open a d9prof chrome export in Chrome DevTools' Performance panel, the
// trace viewer that ships inside Chromium (devtools://devtools/bundled/
// trace_app.html), driven headless by playwright-core. Two checks:
//  - DevTools' own trace engine (models/trace, what the panel builds its
//    tracks from) parses the file: every named thread of the export is a
//    thread track, the poll slices number POLLS, the CPU profiles hold
//    SAMPLES samples and appear on the threads as calls, and every wake
//    flow binds at both ends;
//  - the panel loads the file (its "Load profile" path) and lists it as
//    recording #1 without an error; a screenshot is kept for people.
// The file is served to the page by playwright's request routing.
//   node devtools.js CHROMIUM EXPORT.json SAMPLES POLLS SCREENSHOT.png
// Prints one summary line, or what is wrong and exits 1.
'use strict';
const { chromium } = require('playwright-core');
const fs = require('fs');

const [exe, file, wantSamples, wantPolls, shot] = process.argv.slice(2);
const URL_ = 'http://d9prof.invalid/export.json';

(async () => {
	const browser = await chromium.launch({
		executablePath: exe,
		args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
	});
	const bad = [];
	try {
		// DevTools' CSP allows no http fetches: the test page may
		const page = await browser.newPage({ bypassCSP: true, viewport: { width: 1600, height: 1000 } });
		page.on('pageerror', (e) => bad.push('page error: ' + e.message.split('\n')[0]));
		await page.route(URL_, (r) => r.fulfill({
			path: file, contentType: 'application/json',
			headers: { 'Access-Control-Allow-Origin': '*' },
		}));
		await page.goto('devtools://devtools/bundled/trace_app.html');
		await page.waitForFunction(() => document.body && document.body.childElementCount > 0);
		const t0 = Date.now();
		const got = await page.evaluate(async (url) => {
			const Trace = await import('./models/trace/trace.js');
			const json = await (await fetch(url)).json();
			const model = Trace.TraceModel.Model.createWithAllHandlers();
			await model.parse(json.traceEvents, { metadata: {}, isFreshRecording: false });
			const d = model.parsedTrace(0).data;
			const threads = {};
			for (const [, proc] of d.Renderer.processes)
				for (const [tid, th] of proc.threads) {
					let polls = 0, calls = 0;
					for (const e of th.entries) {
						if (e.cat === 'task' && e.ph === 'X') polls++;
						if (e.name === 'ProfileCall') calls++;
					}
					threads[tid] = { name: th.name, polls, calls };
				}
			let samples = 0;
			for (const [, m] of d.Samples.profilesInProcess)
				for (const [, pd] of m) samples += pd.rawProfile.samples.length;
			const names = {}, busy = {};
			let flowEnds = 0;
			for (const e of json.traceEvents) {
				if (e.ph === 'M' && e.name === 'thread_name') names[e.tid] = e.args.name;
				else busy[e.tid] = 1;
				if (e.ph === 'f') flowEnds++;
			}
			const flows = d.Flows.flows.filter((f) => f.length === 2).length;
			return { threads, samples, names, busy, flowEnds, flows };
		}, URL_);
		const parseMs = Date.now() - t0;
		let polls = 0, calls = 0;
		for (const [tid, th] of Object.entries(got.threads)) {
			polls += th.polls;
			calls += th.calls;
			if (got.names[tid] !== undefined && th.name !== got.names[tid])
				bad.push(`thread ${tid}: DevTools names it ${th.name}, the export ${got.names[tid]}`);
		}
		for (const [tid, name] of Object.entries(got.names))
			if (got.busy[tid] && !got.threads[tid])
				bad.push(`thread ${tid} (${name}) has no track in DevTools`);
		if (polls !== Number(wantPolls)) bad.push(`DevTools shows ${polls} poll slices, the trace has ${wantPolls}`);
		if (got.samples !== Number(wantSamples))
			bad.push(`DevTools has ${got.samples} CPU samples, the trace ${wantSamples}`);
		if (!calls) bad.push('no CPU sample shows on any thread (no ProfileCall entries)');
		if (got.flows !== got.flowEnds) bad.push(`${got.flows} of ${got.flowEnds} wake flows bound at both ends`);

		// the panel itself: load the file as "Load profile" does
		const loaded = await page.evaluate(async (url) => {
			const UI = await import('./ui/legacy/legacy.js');
			await UI.ViewManager.ViewManager.instance().showView('timeline');
			const T = await import('./panels/timeline/timeline.js');
			const blob = await (await fetch(url)).blob();
			await T.TimelinePanel.TimelinePanel.instance().loadFromFile(
				new File([blob], 'export.json', { type: 'application/json' }));
			return blob.size;
		}, URL_);
		// the panel reads and processes the file behind a status dialog,
		// then lists it as recording "#1": wait for that
		const deepText = () => page.evaluate(() => {
			const out = [];
			const walk = (n) => {
				if (n.shadowRoot) walk(n.shadowRoot);
				for (const c of n.children || []) walk(c);
				if (n.nodeType === 1 && !n.children.length && n.textContent) out.push(n.textContent);
			};
			walk(document.documentElement);
			return out.join('\n');
		});
		const t1 = Date.now();
		let text = await deepText();
		const shown = (t) => t.split('\n').some((l) => l.trim() === '#1');
		while (!shown(text) && Date.now() - t1 < 150000) {
			await page.waitForTimeout(500);
			text = await deepText();
		}
		const panelMs = Date.now() - t1;
		if (!shown(text))
			bad.push('the Performance panel did not show the trace within 150 s');
		const err = text.split('\n').find((l) => /failed to (load|parse)|malformed|unable to/i.test(l));
		if (err) bad.push('the Performance panel says: ' + err.trim());
		await page.screenshot({ path: shot });
		const n = Object.keys(got.threads).length;
		if (!bad.length)
			console.log(`DevTools: ${n} thread tracks, ${polls} polls, ${got.samples} samples ` +
				`(${calls} calls on the threads), ${got.flows} wake flows; parsed in ${parseMs} ms; ` +
				`the panel loaded ${loaded} B in ${panelMs} ms more`);
	} catch (e) {
		bad.push(e.message.split('\n')[0]);
	}
	await browser.close();
	if (bad.length) {
		console.log(bad.slice(0, 20).join('\n'));
		process.exit(1);
	}
})();
