import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { RESOURCE_ENDPOINTS } from '../../src/lookups/resources.js';
import { FEED_ENDPOINTS } from '../../src/poller/feeds.js';
import { CHANNELS, RESOURCES } from '../../src/protocol/constants.js';
import { endpoint } from '../../src/upstream/catalogue.js';
import type { FieldTable } from '../../src/upstream/fields.js';

/**
 * The row and result interfaces of src/client/rows.ts, read with the
 * TypeScript checker, against the upstream field tables of the endpoints
 * that actually feed each channel (poller) and answer each resource
 * (gateway): every declared field is there, with the right kind, and there
 * is no field the tables do not know.
 */

const file = fileURLToPath(new URL('../../src/client/rows.ts', import.meta.url));
const program = ts.createProgram([file], {
  strict: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2022.d.ts'],
  types: [],
  skipLibCheck: true,
  noEmit: true,
});
const checker = program.getTypeChecker();
const source = program.getSourceFile(file)!;
const exported = new Map(checker.getExportsOfModule(checker.getSymbolAtLocation(source)!).map((s) => [s.name, s]));

type Kind = 'number' | 'string' | 'list';

function typeOf(name: string): ts.Type {
  const sym = exported.get(name);
  if (sym === undefined) throw new Error(`rows.ts exports no ${name}`);
  return checker.getDeclaredTypeOfSymbol(sym);
}

function propType(t: ts.Type, name: string): ts.Type {
  const p = t.getProperty(name);
  if (p === undefined) throw new Error(`no property ${name}`);
  return checker.getNonNullableType(checker.getTypeOfSymbol(p));
}

/** Declared properties of a type and their kinds (the index signature left out). */
function kinds(t: ts.Type): Record<string, Kind> {
  const out: Record<string, Kind> = {};
  for (const p of checker.getPropertiesOfType(t)) {
    const pt = checker.getNonNullableType(checker.getTypeOfSymbol(p));
    out[p.name] = checker.isArrayType(pt) ? 'list' : (checker.typeToString(pt) as Kind);
  }
  return out;
}

function tableKinds(...tables: FieldTable[]): Record<string, Kind> {
  const out: Record<string, Kind> = {};
  for (const t of tables) for (const [k, v] of Object.entries(t)) out[k] = v === 'n' ? 'number' : 'string';
  return out;
}

function sorted(o: Record<string, Kind>): [string, Kind][] {
  return Object.entries(o).sort(([a], [b]) => (a < b ? -1 : 1));
}

describe('row and result types follow the upstream field tables', () => {
  it('every channel row has the fields of the list row of both API families', () => {
    const rows = typeOf('ChannelRows');
    for (const channel of CHANNELS) {
      const t = propType(rows, channel);
      for (const family of ['v2', 'v3'] as const) {
        const spec = endpoint(FEED_ENDPOINTS[family][channel]).response;
        const table = spec.list !== undefined ? (spec.list.row as FieldTable) : spec.top;
        expect(sorted(kinds(t)), `${channel} ${family}`).toEqual(sorted(tableKinds(table)));
      }
    }
  });

  it('every resource result has the top-level fields and the typed list of the endpoints the gateway calls', () => {
    const data = typeOf('ResourceData');
    for (const resource of RESOURCES) {
      const t = propType(data, resource);
      const ids = RESOURCE_ENDPOINTS[resource];
      const specs = [...Object.values(ids.withCode), ...Object.values(ids.bare ?? {})].map((id) => endpoint(id).response);
      const want = tableKinds(...specs.map((s) => s.top));
      const lists = new Set(specs.map((s) => s.list?.key).filter((k) => k !== undefined));
      for (const key of lists) want[key] = 'list';
      // A list result also says how many rows the bridge dropped (its own field, not the upstream's).
      if (lists.size > 0) want.dropped = 'number';
      expect(sorted(kinds(t)), resource).toEqual(sorted(want));
      for (const spec of specs) {
        if (spec.list === undefined) continue;
        const el = checker.getIndexTypeOfType(propType(t, spec.list.key), ts.IndexKind.Number)!;
        expect(sorted(kinds(el)), `${resource} ${spec.list.key}`).toEqual(sorted(tableKinds(spec.list.row as FieldTable)));
      }
    }
  });

  it('row keys are required where the server guarantees them', () => {
    const req = (name: string, field: string) => !(typeOf(name).getProperty(field)!.flags & ts.SymbolFlags.Optional);
    for (const name of ['QuoteRow', 'OhlcRow', 'TopRow', 'PriceRow', 'BookRow', 'IndexRow']) expect(req(name, 'isuSrtCd'), name).toBe(true);
    expect(req('HistoryRow', 'trdDd')).toBe(true);
    expect(req('IntradayRow', 'inddTm')).toBe(true);
    expect(req('ListItem', 'isuSrtCd')).toBe(true);
    expect(req('InvestorRow', 'invstCd')).toBe(true);
    expect(req('MasterData', 'basPrc')).toBe(false);
  });
});
