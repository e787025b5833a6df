const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `200ms`, `5s`, `2m`, `1h`, `1d` into milliseconds; returns null for anything else. */
export function parseDuration(text: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(text);
  if (!match) return null;
  return Math.round(Number(match[1]) * UNIT_MS[match[2]]);
}

export function parseDurationList(text: string): number[] | null {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p.length > 0);
  if (parts.length === 0) return null;
  const values = parts.map(parseDuration);
  return values.every((v): v is number => v !== null && v > 0) ? values : null;
}
