import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Where the statements of one request go. Outside any route (workers, start-up, guards, writes)
 * everything runs on the primary; a GET runs under a route that lets it read a replica.
 */
export interface ReadRoute {
  /** False sends every statement to the primary: the retry of a read a replica failed. */
  readonly replicaAllowed: boolean;
  /** The replica this request reads, chosen at its first statement so it sees one replica's state. */
  pinned?: number;
  /** Set once a statement went to a replica: only then may a failure be the replica's fault. */
  usedReplica: boolean;
}

const routes = new AsyncLocalStorage<ReadRoute>();

export function runWithRoute<T>(route: ReadRoute, work: () => T): T {
  return routes.run(route, work);
}

export function currentRoute(): ReadRoute | undefined {
  return routes.getStore();
}

/**
 * A fresh route for one read. `recentWrite`: the caller wrote within the lag bound, so a replica
 * might not show that write yet and the primary answers.
 */
export function readRoute(recentWrite: boolean): ReadRoute {
  return { replicaAllowed: !recentWrite, usedReplica: false };
}

/**
 * Which replica a request reads: a random usable one, kept for the rest of the request; none
 * (the primary) when the route forbids replicas or none is usable.
 */
export function chooseReplica(route: ReadRoute | undefined, usable: readonly number[], random = Math.random): number | undefined {
  if (!route?.replicaAllowed) return undefined;
  if (route.pinned === undefined) {
    if (usable.length === 0) return undefined;
    route.pinned = usable[Math.floor(random() * usable.length)];
  }
  route.usedReplica = true;
  return route.pinned;
}
