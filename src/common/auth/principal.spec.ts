import { mayCall, rolesAccepted } from './principal';

describe('rolesAccepted / mayCall', () => {
  it('opens the GETs of admin routes to auditors, and nothing that changes anything', () => {
    expect(rolesAccepted('admin', 'GET')).toEqual(['admin', 'auditor']);
    for (const method of ['POST', 'PATCH', 'PUT', 'DELETE']) {
      expect(rolesAccepted('admin', method)).toEqual(['admin']);
      expect(mayCall(['auditor'], 'admin', method)).toBe(false);
    }
    expect(mayCall(['auditor'], 'admin', 'GET')).toBe(true);
  });

  it('keeps data roles to themselves and admin', () => {
    expect(rolesAccepted('read', 'GET')).toEqual(['read', 'admin']);
    expect(rolesAccepted('write', 'POST')).toEqual(['write', 'admin']);
    expect(mayCall(['auditor'], 'read', 'GET')).toBe(false);
    expect(mayCall(['read', 'auditor'], 'read', 'GET')).toBe(true);
  });

  it('lets admin call auditor routes', () => {
    expect(rolesAccepted('auditor', 'GET')).toEqual(['admin', 'auditor']);
    expect(mayCall(['admin'], 'auditor', 'GET')).toBe(true);
    expect(mayCall(['write'], 'auditor', 'GET')).toBe(false);
  });
});
