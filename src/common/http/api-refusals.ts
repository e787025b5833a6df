import { applyDecorators } from '@nestjs/common';
import { ApiResponse } from '@nestjs/swagger';

/** The statuses an operation refuses a request with on its own rules (guards document theirs). */
export type RefusalStatus = 400 | 404 | 409 | 422;

/**
 * The refusals of one operation, by status: each description names the problem codes the
 * operation answers with and when, and the OpenAPI document gives every code it names a
 * problem+json example. One decorator for all of them keeps an operation's refusals together.
 */
export function ApiRefusals(byStatus: Partial<Record<RefusalStatus, string>>) {
  return applyDecorators(...Object.entries(byStatus).map(([status, description]) => ApiResponse({ status: Number(status), description })));
}
