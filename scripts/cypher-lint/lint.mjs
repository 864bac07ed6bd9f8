#!/usr/bin/env node
// lint.mjs checks Cypher statements offline with Neo4j's own grammar and
// semantic analysis (@neo4j-cypher/language-support, lintCypherQuery), in
// the Neo4j 5 dialect.
//
// Input (stdin): a JSON array whose items are either a Cypher string or an
// object {"name": "...", "query": "...", "params": {...}}. When an item has
// "params", every $parameter the statement uses must be among them (so a
// statement and the parameters the Go code sends cannot drift apart); without
// "params", undefined-parameter diagnostics are ignored.
//
// Output: one line per diagnostic on stderr. Exit status: 0 when no
// statement has an error, 1 when some have, 2 on bad input.
import { readFileSync } from 'node:fs';
import { lintCypherQuery } from '@neo4j-cypher/language-support';

const ERROR = 1; // vscode-languageserver DiagnosticSeverity.Error
const WARNING = 2;

const arg = (name, type, description = '') => ({
  name,
  type,
  description,
  isDeprecated: false,
});
const ret = (name, type) => ({ name, type, description: '', isDeprecated: false });

// procedure declares a Neo4j 5 built-in procedure the statements call, so
// the linter knows it exists (it reports unknown procedures as errors once a
// procedure registry is given) and can check its YIELD columns.
function procedure(name, mode, args, returns, description) {
  const sig =
    `${name}(${args.map((a) => `${a.name} :: ${a.type}`).join(', ')})` +
    (returns.length ? ` :: (${returns.map((r) => `${r.name} :: ${r.type}`).join(', ')})` : '');
  return {
    name,
    description,
    mode,
    worksOnSystem: false,
    argumentDescription: args,
    returnDescription: returns,
    signature: sig,
    admin: false,
    option: { deprecated: false },
  };
}

const procedures = Object.fromEntries(
  [
    procedure(
      'db.index.vector.queryNodes',
      'READ',
      [arg('indexName', 'STRING'), arg('numberOfNearestNeighbours', 'INTEGER'), arg('query', 'ANY')],
      [ret('node', 'NODE'), ret('score', 'FLOAT')],
      'Query the given vector index.',
    ),
    procedure(
      'db.index.fulltext.queryNodes',
      'READ',
      [arg('indexName', 'STRING'), arg('queryString', 'STRING'), { ...arg('options', 'MAP'), default: 'DefaultParameterValue{value={}, type=MAP}' }],
      [ret('node', 'NODE'), ret('score', 'FLOAT')],
      'Query the given full-text index.',
    ),
    procedure('db.awaitIndexes', 'READ', [{ ...arg('timeOutSeconds', 'INTEGER'), default: 'DefaultParameterValue{value=300, type=INTEGER}' }], [], 'Wait for all indexes to come online.'),
  ].map((p) => [p.name, p]),
);

// Built-in functions the statements may use. Giving the linter a function
// registry makes it report any other function as unknown.
const builtins = [
  ['coalesce', 'ANY'], ['collect', 'LIST<ANY>', true], ['count', 'INTEGER', true], ['elementId', 'STRING'],
  ['labels', 'LIST<STRING>'], ['length', 'INTEGER'], ['max', 'ANY', true], ['min', 'ANY', true],
  ['size', 'INTEGER'], ['startNode', 'NODE'], ['endNode', 'NODE'], ['toLower', 'STRING'], ['trim', 'STRING'],
  ['type', 'STRING'], ['head', 'ANY'], ['keys', 'LIST<STRING>'], ['sum', 'ANY', true],
  ['vector.similarity.cosine', 'FLOAT'],
];
const functions = Object.fromEntries(
  builtins.map(([name, returns, aggregating = false]) => [
    name,
    {
      name,
      category: 'builtin',
      description: '',
      isBuiltIn: true,
      argumentDescription: [],
      returnDescription: returns,
      signature: `${name}(...) :: ${returns}`,
      aggregating,
      isDeprecated: false,
    },
  ]),
);

function lint(item, index) {
  const { name = `#${index}`, query, params } = typeof item === 'string' ? { query: item } : item;
  if (typeof query !== 'string' || query.trim() === '') {
    return [{ name, severity: ERROR, message: 'empty or missing query' }];
  }
  const dbSchema = {
    procedures: { 'CYPHER 5': procedures },
    functions: { 'CYPHER 5': functions },
    parameters: params ?? {},
    defaultLanguage: 'CYPHER 5',
  };
  const { diagnostics } = lintCypherQuery(query, dbSchema, { consoleCommandsEnabled: false });
  return diagnostics
    .filter((d) => params !== undefined || !/^Parameter \$.* is not defined\.$/.test(d.message))
    .map((d) => ({
      name,
      severity: d.severity ?? ERROR,
      line: d.range.start.line + 1,
      column: d.range.start.character + 1,
      message: d.message,
    }));
}

let items;
try {
  items = JSON.parse(readFileSync(0, 'utf8'));
  if (!Array.isArray(items)) throw new Error('input is not a JSON array');
} catch (err) {
  console.error(`cypher-lint: ${err.message}`);
  process.exit(2);
}

let errors = 0;
let warnings = 0;
items.forEach((item, i) => {
  for (const d of lint(item, i)) {
    const kind = d.severity === ERROR ? 'error' : d.severity === WARNING ? 'warning' : 'info';
    if (kind === 'error') errors++;
    if (kind === 'warning') warnings++;
    const at = d.line ? `:${d.line}:${d.column}` : '';
    console.error(`${d.name}${at}: ${kind}: ${d.message}`);
  }
});
console.error(`cypher-lint: ${items.length} statements, ${errors} errors, ${warnings} warnings`);
process.exit(errors > 0 ? 1 : 0);
