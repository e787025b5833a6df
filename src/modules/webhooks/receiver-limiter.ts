/**
 * Bounds how many webhooks one worker has in flight to one receiver. A receiver that is slow or
 * dead can then hold only a few slots; the worker's other slots keep serving everyone else.
 */
export class ReceiverLimiter {
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly perReceiver: number) {}

  tryAcquire(receiver: string): boolean {
    const current = this.inFlight.get(receiver) ?? 0;
    if (current >= this.perReceiver) return false;
    this.inFlight.set(receiver, current + 1);
    return true;
  }

  release(receiver: string): void {
    const current = this.inFlight.get(receiver) ?? 0;
    if (current <= 1) this.inFlight.delete(receiver);
    else this.inFlight.set(receiver, current - 1);
  }

  count(receiver: string): number {
    return this.inFlight.get(receiver) ?? 0;
  }
}

/** Receivers are told apart by origin: one host and port share one budget. */
export function receiverKey(url: string): string {
  return new URL(url).origin;
}
