import type { Request } from 'express';
import { Strategy } from 'passport-strategy';

type Verify = (token: string, done: (error: unknown, user?: unknown) => void) => void;

/**
 * Bearer authentication from the Authorization header only. Keys passed in query strings or
 * bodies end up in access logs and browser history, so they are deliberately not read.
 */
export class BearerHeaderStrategy extends Strategy {
  name = 'bearer-header';

  constructor(private readonly verify: Verify) {
    super();
  }

  authenticate(req: Request): void {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
    if (!match) {
      this.fail('Bearer', 401);
      return;
    }
    this.verify(match[1], (error, user) => {
      if (error) this.error(error as Error);
      else if (user) this.success(user);
      else this.fail('Bearer error="invalid_token"', 401);
    });
  }
}
