// DuckDB (an in-memory database) runs each SQL argument in turn and prints
// each one's rows, one per line, columns separated by tabs, NULL as \N: what
// tests/e2e/tables.sh compares with d9prof's own views. A failed query is
// one line on stderr and exit status 1.
import { DuckDBInstance } from '@duckdb/node-api';

const db = await DuckDBInstance.create(':memory:');
const c = await db.connect();
try {
	for (const sql of process.argv.slice(2)) {
		const r = await c.runAndReadAll(sql);
		for (const row of r.getRowsJson())
			console.log(row.map((v) => (v === null ? '\\N' : Array.isArray(v) ? v.join(';') : String(v))).join('\t'));
	}
} catch (e) {
	console.error(`duckdb: ${String(e.message).split('\n')[0]}`);
	process.exit(1);
}
