import type { z } from 'zod';

/**
 * A short readable summary of a zod failure: up to three issues as
 * `path: message`. Zod messages describe the expected shape, not the value.
 */
export function issuesText(error: z.ZodError, max = 3): string {
  const parts = error.issues.slice(0, max).map((i) => {
    const path = i.path.map(String).join('.');
    // Enum messages list every option; keep error frames short.
    const text = i.message.length > 160 ? `${i.message.slice(0, 157)}...` : i.message;
    return path ? `${path}: ${text}` : text;
  });
  const more = error.issues.length > max ? ` (+${error.issues.length - max} more)` : '';
  return parts.join('; ') + more;
}
