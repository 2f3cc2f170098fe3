import ts from 'typescript';
import { fileURLToPath } from 'node:url';
import * as messages from '../src/protocol/messages.js';

/**
 * Writes the wire message types of src/protocol/messages.ts (each a
 * `z.infer` of its zod schema) out as plain TypeScript, so the SDK's type
 * declarations need no zod: src/protocol/wire.ts. The zod schemas stay the
 * one definition; this is derived from them by the TypeScript checker, and
 * test/protocol/wire.test.ts checks both that the file is current and that
 * each type equals its `z.infer`.
 */

const SOURCE = fileURLToPath(new URL('../src/protocol/messages.ts', import.meta.url));

const HEADER = `/**
 * The wire messages of protocol v1 as plain TypeScript types, generated from
 * the zod schemas of ./messages.ts by \`npm run docs\` (scripts/wire-types.ts):
 * do not edit. The SDK takes its types from here, so its declarations need
 * no zod; test/protocol/wire.test.ts checks each equals its \`z.infer\`.
 * See docs/PROTOCOL.md.
 */
`;

/** The text of src/protocol/wire.ts. */
export function wireTypes(): string {
  const program = ts.createProgram([SOURCE], {
    strict: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    skipLibCheck: true,
    // The schemas need no ambient types: without @types/node the program is 161 files, not 269.
    types: [],
  });
  const checker = program.getTypeChecker();
  const file = program.getSourceFile(SOURCE)!;
  const printer = ts.createPrinter({ newLine: ts.NewLineKind.LineFeed });
  const names = new Map<unknown, string>(Object.entries(messages).map(([k, v]) => [v, k]));
  const out: string[] = [HEADER];
  const bodies = new Map<string, string>();
  for (const sym of checker.getExportsOfModule(checker.getSymbolAtLocation(file)!)) {
    if (!(sym.flags & ts.SymbolFlags.TypeAlias)) continue;
    // The schema's comment (the type's own comment follows it and repeats it).
    const doc = ts.displayPartsToString(sym.getDocumentationComment(checker)).split('\n')[0];
    out.push(`/** ${doc || sym.name} */`);
    // A union of named messages stays a union of their names.
    const options = (messages as unknown as Record<string, { options?: readonly unknown[] }>)[sym.name]?.options;
    const named = options?.map((o) => names.get(o));
    if (named && named.every((n): n is string => !!n)) {
      out.push(`export type ${sym.name} = ${named.join(' | ')};\n`);
      continue;
    }
    const node = checker.typeToTypeNode(
      checker.getDeclaredTypeOfSymbol(sym),
      file,
      ts.NodeBuilderFlags.NoTruncation | ts.NodeBuilderFlags.InTypeAlias | ts.NodeBuilderFlags.MultilineObjectLiterals,
    )!;
    bodies.set(sym.name, printer.printNode(ts.EmitHint.Unspecified, node, file).replace(/ {4}/g, '  '));
    out.push(`export type ${sym.name} = ${bodies.get(sym.name)};\n`);
  }
  // A named type printed inside another (PatchOp in PatchMsg) is written by its name.
  let text = out.join('\n');
  for (const [name, body] of bodies) {
    const nested = body.replace(/\n/g, '\n  ');
    text = text.split(`(${nested})[]`).join(`${name}[]`);
  }
  return text;
}
