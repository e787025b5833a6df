/**
 * How many blocks one eth_getLogs asks for, for the leased readers of a chain (the follower and
 * the contract indexers). A range the node refuses is halved; after a run of accepted ranges a
 * halved size doubles again up to the largest, so one dense stretch of blocks does not slow the
 * reading of the rest of the chain for good.
 */
export interface LogRange {
  /** Blocks per eth_getLogs. */
  size: number;
  /** Ranges accepted in a row since the size was last halved or doubled. */
  accepted: number;
}

/** Half of the refused range [from, to], at least one block. */
export function halvedRange(from: number, to: number): number {
  return Math.max(1, Math.floor((to - from + 1) / 2));
}

/** The range after the node refused [from, to]. */
export function afterRefusal(from: number, to: number): LogRange {
  return { size: halvedRange(from, to), accepted: 0 };
}

/** How a reader sizes its ranges: the largest (and first) size, and how many accepted ranges in a row double a halved one. */
export interface LogRangePolicy {
  largest: number;
  regrowAfter: number;
}

export function firstRange(policy: LogRangePolicy): LogRange {
  return { size: policy.largest, accepted: 0 };
}

/** The range after one was accepted: doubled (at most to the largest) once enough were accepted in a row below it. */
export function afterAcceptance(range: LogRange, { largest, regrowAfter }: LogRangePolicy): LogRange {
  if (range.size >= largest) return range;
  const accepted = range.accepted + 1;
  return accepted >= regrowAfter ? { size: Math.min(largest, range.size * 2), accepted: 0 } : { size: range.size, accepted };
}
