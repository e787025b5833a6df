import { AdmittedAttempts, admitAttempt, AdmissionState, organizationShare } from './fair-share';

const idle: AdmissionState = {
  endpointInFlight: 0,
  endpointLimit: 10,
  endpointIsFast: false,
  organizationInFlight: 0,
  organizationLimit: 25,
};

describe('admitAttempt (fair scheduling across organizations)', () => {
  it('admits an attempt while its endpoint and its organization have room', () => {
    expect(admitAttempt(idle)).toBe('afterClaim');
    expect(admitAttempt({ ...idle, endpointInFlight: 9, organizationInFlight: 24 })).toBe('afterClaim');
  });

  it('refuses an organization at its cap even though every one of its endpoints has room', () => {
    // 8 endpoints of one organization, each below its own limit, together at the organization's cap.
    expect(admitAttempt({ ...idle, endpointInFlight: 3, organizationInFlight: 25 })).toBe('none');
    expect(admitAttempt({ ...idle, organizationInFlight: 30 })).toBe('none');
  });

  it("lets an attempt to a fast endpoint wait briefly for its organization's next freed slot", () => {
    expect(admitAttempt({ ...idle, endpointIsFast: true, organizationInFlight: 25 })).toBe('afterClaim');
    expect(admitAttempt({ ...idle, endpointIsFast: true, endpointInFlight: 10, organizationInFlight: 25 })).toBe('afterClaim');
  });

  it('keeps the per-endpoint limit: a slow endpoint at its limit waits, a fast one may wait for a slot', () => {
    expect(admitAttempt({ ...idle, endpointInFlight: 10 })).toBe('none');
    expect(admitAttempt({ ...idle, endpointInFlight: 10, endpointIsFast: true })).toBe('afterClaim');
  });

  it("one organization's cap does not touch another's admission", () => {
    const noisy = { ...idle, organizationInFlight: 25 };
    const quiet = { ...idle, organizationInFlight: 0 };
    expect([admitAttempt(noisy), admitAttempt(quiet)]).toEqual(['none', 'afterClaim']);
  });
});

describe('organizationShare (the cap shrinks as more organizations are busy)', () => {
  it('is the configured cap while the organization is alone on the worker', () => {
    expect(organizationShare(25, 50, 0)).toBe(25);
    expect(organizationShare(10, 50, 0)).toBe(10);
  });

  it('always leaves a share free for an organization with nothing in flight yet', () => {
    for (const others of [1, 2, 5, 10, 48, 200]) {
      const share = organizationShare(25, 50, others);
      // Every active organization (the others and this one) at its share still leaves room.
      if (others + 1 < 50) expect(50 - share * (others + 1)).toBeGreaterThanOrEqual(share);
      expect(share).toBeGreaterThanOrEqual(1);
    }
    expect(organizationShare(25, 50, 1)).toBe(16);
    expect(organizationShare(25, 50, 9)).toBe(4);
  });

  it('never falls below one slot', () => {
    expect(organizationShare(25, 4, 10)).toBe(1);
  });

  it('counts admitted attempts per endpoint and organization until each is removed', () => {
    const admitted = new AdmittedAttempts();
    const a = { organizationId: 'o1', endpointId: 'e1' };
    const b = { organizationId: 'o1', endpointId: 'e2' };
    admitted.add(a);
    admitted.add(a);
    admitted.add(b);
    expect(admitted.endpoints.get('e1')).toBe(2);
    expect(admitted.organizations.get('o1')).toBe(3);
    admitted.remove(a);
    admitted.remove(a);
    admitted.remove(b);
    expect(admitted.endpoints.size).toBe(0);
    expect(admitted.organizations.size).toBe(0);
  });
});
