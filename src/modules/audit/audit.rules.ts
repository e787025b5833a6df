export type AuditChanges = Record<string, { from: unknown; to: unknown }>;

export const REDACTED = '[redacted]';

/**
 * The fields that differ between two snapshots, as `{field: {from, to}}`. Secret fields are
 * reported as changed without ever showing a value.
 */
export function diffForAudit(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
  secretFields: readonly string[] = [],
): AuditChanges {
  const changes: AuditChanges = {};
  for (const field of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const from = before[field] ?? null;
    const to = after[field] ?? null;
    if (JSON.stringify(from) === JSON.stringify(to)) continue;
    changes[field] = secretFields.includes(field)
      ? { from: from === null ? null : REDACTED, to: to === null ? null : REDACTED }
      : { from, to };
  }
  return changes;
}
