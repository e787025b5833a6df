// Fragments of SQL the delivery repositories share.

/**
 * Whether a numbered webhook `w` still has a pending predecessor (a lower number of its endpoint
 * and resource), answered from the partial index of pending numbered webhooks. That predecessor
 * may be in an older day's partition.
 */
export const PENDING_PREDECESSOR = `exists (
  select 1 from webhook_delivery p
   where p.endpoint_id = w.endpoint_id and p.resource_id = w.resource_id and p.status = 'pending'
     and p.sequence is not null and p.sequence < w.sequence)`;

/**
 * "Still pending", for the statements that pick webhooks by id. Written so that it does not match
 * the partial indexes on pending webhooks (`where status = 'pending'`): their row estimate comes
 * from the last ANALYZE, often taken when nothing was pending, and with the plain test the
 * planner read every pending webhook through the due index and hash-joined them with the ids.
 * During a burst that is the whole backlog on every statement (24.5 ms instead of 2.7 ms for a
 * batch of 100 results with 30,000 pending). With the ids alone, each webhook is one primary-key
 * probe.
 */
export const pending = (alias: string) => `coalesce(${alias}.status, '') = 'pending'`;
