/**
 * A Dockerfile reader for the deployment tests: stages and their
 * instructions, with line continuations joined and comments dropped. Only
 * what our Dockerfile uses (FROM … AS, WORKDIR, ENV, COPY [--from], RUN,
 * USER, EXPOSE, HEALTHCHECK, CMD); exec-form arguments are JSON arrays.
 */

/** One instruction. */
export interface Instruction {
  readonly op: string;
  /** Flags before the arguments (`--from=build` → `from: build`). */
  readonly flags: Readonly<Record<string, string>>;
  /** The arguments as written (flags removed). */
  readonly args: string;
}

/** One build stage. */
export interface Stage {
  readonly name: string;
  readonly base: string;
  readonly instructions: Instruction[];
}

/** The stages of a Dockerfile, in order. */
export function parseDockerfile(text: string): Stage[] {
  const logical: string[] = [];
  let cur = '';
  for (const raw of text.split('\n')) {
    const line = raw.trimEnd();
    if (cur === '' && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
    if (cur !== '' && line.trimStart().startsWith('#')) continue;
    if (line.endsWith('\\')) cur += line.slice(0, -1).trim() + ' ';
    else {
      logical.push((cur + line.trim()).trim());
      cur = '';
    }
  }
  const stages: Stage[] = [];
  for (const l of logical) {
    const m = /^([A-Za-z]+)\s+(.*)$/.exec(l);
    if (!m) throw new Error(`unreadable Dockerfile line: ${l}`);
    const op = m[1]!.toUpperCase();
    let rest = m[2]!;
    const flags: Record<string, string> = {};
    for (let f; (f = /^--([a-z-]+)=(\S+)\s+/.exec(rest)); rest = rest.slice(f[0].length)) flags[f[1]!] = f[2]!;
    if (op === 'FROM') {
      const fm = /^(\S+)(?:\s+AS\s+(\S+))?$/i.exec(rest);
      if (!fm) throw new Error(`unreadable FROM: ${l}`);
      stages.push({ base: fm[1]!, name: fm[2] ?? String(stages.length), instructions: [] });
      continue;
    }
    const stage = stages.at(-1);
    if (!stage) throw new Error(`${op} before FROM`);
    stage.instructions.push({ op, flags, args: rest });
  }
  return stages;
}

/** The exec-form (JSON array) arguments of CMD or HEALTHCHECK … CMD. */
export function execForm(args: string): string[] {
  const at = args.indexOf('[');
  const parsed = JSON.parse(args.slice(at)) as unknown;
  if (at < 0 || !Array.isArray(parsed) || !parsed.every((a) => typeof a === 'string')) throw new Error(`not an exec form: ${args}`);
  return parsed as string[];
}

/** `KEY=value` pairs of an ENV instruction (values without spaces or in double quotes). */
export function envPairs(args: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of args.matchAll(/([A-Za-z_][A-Za-z0-9_]*)=("(?:[^"\\]|\\.)*"|\S*)/g))
    out[m[1]!] = m[2]!.startsWith('"') ? (JSON.parse(m[2]!) as string) : m[2]!;
  return out;
}
