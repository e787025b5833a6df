import { admitAttempt, AdmissionState } from './fair-share';

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
