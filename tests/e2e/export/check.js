// Decode a d9prof pprof export with pprof-format and compare it with
// 'd9prof flame --by task --format folded' of the same trace.
//   node check.js PROFILE.pb.gz FOLDED [TASK]
// Prints what differs and exits 1, else one summary line.
'use strict';
const { Profile } = require('pprof-format');
const fs = require('fs');
const zlib = require('zlib');

const [file, foldedFile, task] = process.argv.slice(2);
const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(file)));
const S = (i) => p.stringTable.strings[Number(i)];
const bad = [];
const types = p.sampleType.map((v) => S(v.type) + '/' + S(v.unit)).join(',');
if (!types.startsWith('samples/count,cpu/nanoseconds'))
	bad.push('sample types: ' + types);
if (S(p.periodType.type) !== 'cpu' || !(Number(p.period) > 0))
	bad.push('period: ' + S(p.periodType.type) + ' ' + p.period);
if (!(Number(p.durationNanos) > 0) || !(Number(p.timeNanos) > 1.5e18))
	bad.push('time_nanos ' + p.timeNanos + ' duration_nanos ' + p.durationNanos);

const loc = new Map(p.location.map((l) => [Number(l.id), l]));
const fn = new Map(p.function.map((f) => [Number(f.id), f]));
// a name as frame_label() writes it in folded output
const clean = (s) => s.replace(/;/g, ':').replace(/[\x00-\x1f\x7f]/g, '?');
const KERNEL = 0xffff800000000000n;
const got = new Map();
let total = 0, cpu = 0;
for (const s of p.sample) {
	const lab = {};
	for (const l of s.label) lab[S(l.key)] = Number(l.str) ? S(l.str) : Number(l.num);
	for (const k of ['task_id', 'task_name', 'thread', 'tid'])
		if (!(k in lab)) { bad.push('a sample without label ' + k); break; }
	if (task !== undefined && String(lab.task_id) !== task)
		bad.push('task ' + lab.task_id + ' in a --task ' + task + ' export');
	if (lab.task_id && !('poll' in lab)) bad.push('a sample in a task without poll label');
	const root = lab.task_id === 0 ? '[no poll]'
		: 'task ' + lab.task_id + (lab.task_name === '[unnamed]' ? '' : ' ' + clean(lab.task_name));
	const frames = [];
	for (const id of s.locationId) {
		const l = loc.get(Number(id));
		if (!l) { bad.push('no location ' + id); continue; }
		const k = BigInt(l.address) >= KERNEL;
		l.line.forEach((ln, i) => {
			const name = clean(S(fn.get(Number(ln.functionId)).name));
			frames.push(name + (i < l.line.length - 1 ? ' [inlined]' : k ? '_[k]' : ''));
		});
	}
	const key = [root, ...frames.reverse()].join(';');
	const n = Number(s.value[0]);
	got.set(key, (got.get(key) || 0) + n);
	total += n;
	cpu += Number(s.value[1]);
}
if (Math.abs(cpu - total * Number(p.period)) > p.sample.length)
	bad.push('cpu ns ' + cpu + ' is not samples ' + total + ' x period ' + p.period);

const want = new Map();
let wtotal = 0;
for (const line of fs.readFileSync(foldedFile, 'utf8').split('\n')) {
	if (!line) continue;
	const at = line.lastIndexOf(' ');
	const n = Number(line.slice(at + 1));
	want.set(line.slice(0, at), n);
	wtotal += n;
}
if (total !== wtotal) bad.push('total ' + total + ', folded says ' + wtotal);
for (const [k, n] of want)
	if (got.get(k) !== n) bad.push('folded ' + n + ', pprof ' + (got.get(k) || 0) + ': ' + k);
for (const [k, n] of got)
	if (!want.has(k)) bad.push('pprof ' + n + ', not in folded: ' + k);
if (bad.length) {
	console.log(bad.slice(0, 20).join('\n'));
	process.exit(1);
}
console.log(`${total} samples in ${p.sample.length} pprof samples, ${want.size} stacks, ` +
	`${p.location.length} locations, ${p.function.length} functions, ${p.mapping.length} mappings`);
