import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';

/**
 * docs/ARCHITECTURE.md's module table against the code: one row per folder of src/modules, each
 * entity's table in its module's row, and the ownership rule itself: SQL naming a table is
 * written only in the folder of the module that owns it.
 */

const ROOT = join(__dirname, '..');
const SRC = join(ROOT, 'src');
const MODULES = join(SRC, 'modules');
const DOC = join(ROOT, 'docs', 'ARCHITECTURE.md');

interface ModuleRow {
  name: string;
  tables: string[];
}

/** The rows of the table under "## Modules and what they own": `name` | owned tables | exports. */
function moduleRows(): ModuleRow[] {
  const doc = readFileSync(DOC, 'utf8');
  const start = doc.indexOf('## Modules and what they own');
  if (start < 0) throw new Error('docs/ARCHITECTURE.md has no "## Modules and what they own" section');
  const rows: ModuleRow[] = [];
  let inTable = false;
  for (const line of doc.slice(start).split('\n').slice(1)) {
    if (line.startsWith('## ') || line.startsWith('### ')) break;
    if (!line.startsWith('|')) {
      if (inTable) break;
      continue;
    }
    inTable = true;
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((cell) => cell.trim());
    const name = /^`([a-z0-9-]+)`$/.exec(cells[0]);
    if (!name) continue; // the header and its rule
    const tables = [...cells[1].matchAll(/`([a-z_][a-z0-9_]*)`/g)].map((m) => m[1]).filter((t) => !t.includes('-'));
    rows.push({ name: name[1], tables });
  }
  return rows;
}

function moduleFolders(): string[] {
  return readdirSync(MODULES)
    .filter((name) => statSync(join(MODULES, name)).isDirectory())
    .sort();
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return filesUnder(path);
    return path.endsWith('.ts') && !path.endsWith('.spec.ts') ? [path] : [];
  });
}

/** The module folder a src file belongs to, or null outside src/modules. */
function moduleOf(file: string): string | null {
  const parts = relative(MODULES, file).split(sep);
  return parts.length > 1 && parts[0] !== '..' ? parts[0] : null;
}

/** The tables the module's entities map (`@Entity({ tableName: '…' })`). */
function entityTables(module: string): string[] {
  return filesUnder(join(MODULES, module))
    .filter((file) => file.endsWith('.entity.ts'))
    .flatMap((file) => [...readFileSync(file, 'utf8').matchAll(/tableName:\s*'([a-z_][a-z0-9_]*)'/g)].map((m) => m[1]));
}

/**
 * Every table a migration creates, the built-in ones (migrations/) and an extension module's own
 * (src/modules/<name>/migrations/); those dropped again included: no row may claim an unknown table.
 */
function migrationTables(): Set<string> {
  const dir = join(ROOT, 'migrations');
  const files = [
    ...readdirSync(dir)
      .filter((name) => name.endsWith('.ts'))
      .map((name) => join(dir, name)),
    ...filesUnder(MODULES).filter((file) => file.split(sep).includes('migrations')),
  ];
  const tables = new Set<string>();
  for (const file of files) {
    for (const m of readFileSync(file, 'utf8').matchAll(/create table (?:if not exists )?"([a-z_][a-z0-9_]*)"/gi)) tables.add(m[1]);
  }
  return tables;
}

const SQL_KEYWORDS = /\b(select|insert|update|delete|from|join|into|table|returning|values|where)\b/i;

interface Literal {
  /** The literal's text; a template's pieces joined by `?`. */
  text: string;
  /** Passed to a query builder call or as a `table:` property: the text alone names a table. */
  names: boolean;
  /** file:line */
  at: string;
}

/** Every string and template literal of a TypeScript source. */
function literalsOf(file: string, text = readFileSync(file, 'utf8')): Literal[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const literals: Literal[] = [];
  const visit = (node: ts.Node): void => {
    let literal: string | null = null;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) literal = node.text;
    else if (ts.isTemplateExpression(node)) literal = [node.head.text, ...node.templateSpans.map((span) => span.literal.text)].join(' ? ');
    if (literal !== null) {
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      literals.push({ text: literal, names: isBuilderArgument(node), at: `${relative(ROOT, file)}:${line}` });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return literals;
}

/**
 * Where `literals` name `table` in SQL: in a string or template that reads as SQL (the table
 * double-quoted, or bare after from/join/into/update/table), as a query-builder argument
 * (`knex('t')`, `.from('t')`, `.into('t')`, `.table('t')`, `.join('t', …)`), or as a `table: 't'`
 * property (sealed columns and partitions name their table this way).
 */
function sqlNaming(literals: Literal[], table: string): string[] {
  const quoted = `"${table}"`;
  const bare = new RegExp(`\\b(from|join|into|update|table|references|exists)\\s+${table}\\b(?!\\s*[.(])`, 'i');
  return literals
    .filter((l) => (l.text === table && l.names) || (SQL_KEYWORDS.test(l.text) && (l.text.includes(quoted) || bare.test(l.text))))
    .map((l) => l.at);
}

const BUILDER_CALLS = /(^|\.)(knex|from|into|table|join|innerJoin|leftJoin|rightJoin|fullOuterJoin|withSchema|hasTable)$/;

function isBuilderArgument(node: ts.Node): boolean {
  const parent = node.parent;
  if (ts.isPropertyAssignment(parent) && parent.initializer === node) return /^(table|tableName)$/.test(parent.name.getText());
  if (!ts.isCallExpression(parent) || !parent.arguments.includes(node as ts.Expression)) return false;
  return BUILDER_CALLS.test(parent.expression.getText()) || ts.isCallExpression(parent.expression);
}

/**
 * SQL on another module's table that the rule lets stand, each with its reason (a file path from
 * the repository root, and the table). Empty today; keep it so: an entry needs a reason that
 * neither the owner's exports nor moving the table's row in the doc can serve.
 */
const ALLOWED: readonly { file: string; table: string; reason: string }[] = [];

describe('docs/ARCHITECTURE.md', () => {
  const rows = moduleRows();
  const folders = moduleFolders();

  it('has one row in the module table per folder of src/modules, and none for a folder that does not exist', () => {
    const named = rows.map((row) => row.name);
    const missing = folders.filter((folder) => !named.includes(folder));
    const unknown = named.filter((name) => !folders.includes(name));
    const repeated = named.filter((name, i) => named.indexOf(name) !== i);
    expect({
      missing: missing.map(
        (m) => `src/modules/${m} has no row in the module table of docs/ARCHITECTURE.md: add one with its tables and exports`,
      ),
      unknown: unknown.map((m) => `docs/ARCHITECTURE.md has a row for "${m}", which is not a folder of src/modules`),
      repeated,
    }).toEqual({ missing: [], unknown: [], repeated: [] });
  });

  it("lists each entity's table in its module's row, each table once, and only tables the migrations create", () => {
    const problems: string[] = [];
    const created = migrationTables();
    for (const folder of folders) {
      const row = rows.find((r) => r.name === folder);
      for (const table of entityTables(folder)) {
        if (!row?.tables.includes(table))
          problems.push(`table ${table} (an entity of src/modules/${folder}) is not in the "${folder}" row`);
      }
    }
    const owners = new Map<string, string>();
    for (const row of rows) {
      for (const table of row.tables) {
        if (owners.has(table)) problems.push(`table ${table} is claimed by both "${owners.get(table)}" and "${row.name}"`);
        owners.set(table, row.name);
        if (!created.has(table)) problems.push(`table ${table} in the "${row.name}" row is created by no migration`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('holds SQL naming a table only in the folder of the module that owns it', () => {
    const owners = new Map(rows.flatMap((row) => row.tables.map((table) => [table, row.name] as const)));
    // Every module's entity tables count, whether or not the doc lists them yet.
    for (const folder of folders) for (const table of entityTables(folder)) if (!owners.has(table)) owners.set(table, folder);
    const violations: string[] = [];
    for (const file of filesUnder(SRC)) {
      const module = moduleOf(file);
      const literals = literalsOf(file);
      for (const [table, owner] of owners) {
        if (module === owner || ALLOWED.some((a) => a.file === relative(ROOT, file) && a.table === table)) continue;
        for (const where of sqlNaming(literals, table)) {
          violations.push(
            `${where} names table ${table}, owned by "${owner}": go through what src/modules/${owner} exports ` +
              `(or, if the table has moved to this module, move it to this module's row in docs/ARCHITECTURE.md)`,
          );
        }
      }
    }
    expect(violations).toEqual([]);
  });

  it('has one writer of balance: BalanceRepository, as the ledger section says', () => {
    const writes = /\b(insert\s+into|update|delete\s+from)\s+"balance"/i;
    const writers = filesUnder(MODULES)
      .flatMap((file) => literalsOf(file).filter((l) => writes.test(l.text)))
      .map((l) => l.at.split(':')[0]);
    expect([...new Set(writers)]).toEqual(['src/modules/transactions/balance.repository.ts']);
  });

  it('finds SQL naming a table in every form it is written, and not in prose', () => {
    const file = join(MODULES, 'example', 'sample.ts');
    const lines = (code: string) => sqlNaming(literalsOf(file, code), 'token').map((where) => where.split(':')[1]);
    expect(lines('const a = `select t."id" from "token" t where t."id" = ${x}`;')).toEqual(['1']);
    expect(lines("const b = 'select id from token where id = ?';")).toEqual(['1']);
    expect(lines('const c = `update token set name = ?`;')).toEqual(['1']);
    expect(lines("const d = knex('token').where({ id });")).toEqual(['1']);
    expect(lines("const e = qb.from('token');")).toEqual(['1']);
    expect(lines("const f = { table: 'token', column: 'secret' };")).toEqual(['1']);
    expect(lines('const g = `Token ${id} does not exist: the token was deleted from the wallet`;')).toEqual([]);
    expect(lines('const h = `select * from "token_media" m join token_media_x on true`;')).toEqual([]);
    expect(lines("const i = 'token';")).toEqual([]);
  });
});
