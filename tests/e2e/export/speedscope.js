// Validate a d9prof speedscope export against the schema speedscope ships
// (dist/release/file-format-schema.json) with ajv, and compare its stacks
// with 'd9prof flame --by task --format folded' (or --by thread) of the
// same trace: every profile is one root of the folded output, every
// sample one folded line, weights = count x 1e9 / frequency.
//   node speedscope.js EXPORT.json FOLDED
// Prints what differs and exits 1, else one summary line.
'use strict';
const Ajv = require('ajv');
const fs = require('fs');
const path = require('path');

const [file, foldedFile] = process.argv.slice(2);
const schema = JSON.parse(fs.readFileSync(path.join(path.dirname(
	require.resolve('speedscope/package.json')), 'dist/release/file-format-schema.json')));
const ss = JSON.parse(fs.readFileSync(file, 'utf8'));
const bad = [];
const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile({ ...schema, $ref: '#/definitions/FileFormat.File' });
if (!validate(ss))
	bad.push(...validate.errors.slice(0, 10).map((e) => 'schema: ' + e.instancePath + ' ' + e.message));
if (!/^d9prof [0-9]+\.[0-9]+\.[0-9]+$/.test(ss.exporter)) bad.push('exporter ' + ss.exporter);

const want = new Map(), wantRoot = new Map();
for (const line of fs.readFileSync(foldedFile, 'utf8').split('\n')) {
	if (!line) continue;
	const at = line.lastIndexOf(' ');
	const n = Number(line.slice(at + 1)), key = line.slice(0, at);
	want.set(key, n);
	const root = key.split(';')[0];
	wantRoot.set(root, (wantRoot.get(root) || 0) + n);
}
// one sample's nanoseconds: all the weight over folded's samples
let wsum = 0, wtotal = 0;
for (const p of ss.profiles) for (const w of p.weights) wsum += w;
for (const n of want.values()) wtotal += n;
const period = wsum / wtotal;
const F = ss.shared.frames;
const got = new Map();
let total = 0;
for (const p of ss.profiles) {
	if (p.type !== 'sampled' || p.unit !== 'nanoseconds') bad.push(p.name + ': ' + p.type + ' ' + p.unit);
	if (p.samples.length !== p.weights.length) bad.push(p.name + ': samples and weights differ in length');
	let sum = 0, n = 0;
	p.samples.forEach((s, i) => {
		const c = Math.round(p.weights[i] / period);
		const key = [p.name, ...s.map((k) => (F[k] ? F[k].name : '?' + k))].join(';');
		got.set(key, (got.get(key) || 0) + c);
		sum += p.weights[i];
		n += c;
	});
	if (Math.abs(p.endValue - p.startValue - sum) > p.weights.length)
		bad.push(p.name + ': endValue ' + p.endValue + ', weights sum to ' + sum);
	if (wantRoot.get(p.name) !== n)
		bad.push(p.name + ': ' + n + ' samples, folded says ' + wantRoot.get(p.name));
	total += n;
}
for (const [k, n] of want)
	if (got.get(k) !== n) bad.push('folded ' + n + ', speedscope ' + (got.get(k) || 0) + ': ' + k);
for (const [k, n] of got)
	if (!want.has(k)) bad.push('speedscope ' + n + ', not in folded: ' + k);
const names = new Set(F.map((f) => f.name));
if (names.size !== F.length) bad.push('shared.frames repeats a name');
if (bad.length) {
	console.log(bad.slice(0, 20).join('\n'));
	process.exit(1);
}
console.log(`schema ok; ${total} samples in ${ss.profiles.length} profiles, ${want.size} stacks, ` +
	`${F.length} shared frames`);
