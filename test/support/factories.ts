import type { Role } from '../../src/common/auth/principal';
import { HttpTarget, OPERATOR_KEY } from './test-app';

export interface TestOrganization {
  id: string;
  name: string;
  /** An admin key (admin implies read and write). */
  adminKey: string;
}

let organizationCounter = 0;

export async function createOrganization(t: HttpTarget, name?: string): Promise<TestOrganization> {
  organizationCounter += 1;
  const orgName = name ?? `Org ${organizationCounter} ${Date.now()}`;
  const created = await t
    .http()
    .post('/admin/v1/organizations')
    .set('authorization', `Bearer ${OPERATOR_KEY}`)
    .send({ name: orgName })
    .expect(201);
  const adminKey = await createApiKey(t, created.body.id, ['admin']);
  return { id: created.body.id, name: orgName, adminKey: adminKey.key };
}

export async function createApiKey(
  t: HttpTarget,
  organizationId: string,
  roles: Role[],
  name = roles.join('+'),
): Promise<{ id: string; key: string; keyPrefix: string }> {
  const res = await t
    .http()
    .post(`/admin/v1/organizations/${organizationId}/api-keys`)
    .set('authorization', `Bearer ${OPERATOR_KEY}`)
    .send({ name, roles })
    .expect(201);
  return res.body;
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

/** Asserts the RFC 9457 shape every error answer must have. */
export function expectProblem(res: { status: number; headers: Record<string, string>; body: unknown }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = res.body as Record<string, unknown>;
  expect(body).toEqual(
    expect.objectContaining({ type: expect.any(String), title: expect.any(String), status, detail: expect.any(String), code }),
  );
  expect(body.requestId).toBe(res.headers['x-request-id']);
  expect(JSON.stringify(body)).not.toMatch(/\bat .+\.(js|ts):\d+|select |insert into/i);
}
