/** A W3C Trace Context position: the trace, the span within it, and its flags (bit 0: sampled). */
export interface TracePosition {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ALL_ZERO = /^0+$/;

/**
 * Reads a W3C `traceparent` header value; null for anything malformed, the forbidden version ff,
 * or all-zero ids (which the specification says to ignore). A later version may append fields.
 */
export function parseTraceparent(value: string | null | undefined): TracePosition | null {
  if (typeof value !== 'string') return null;
  const match = TRACEPARENT.exec(value.trim());
  if (!match) return null;
  const [, version, traceId, spanId, flags, rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  if (ALL_ZERO.test(traceId) || ALL_ZERO.test(spanId)) return null;
  return { traceId, spanId, traceFlags: parseInt(flags, 16) };
}

/** The version-00 `traceparent` value of a position. */
export function formatTraceparent(position: TracePosition): string {
  return `00-${position.traceId}-${position.spanId}-${(position.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}
