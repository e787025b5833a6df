import type { OpenAPIObject } from '@nestjs/swagger';
import { codesForStatus, ERROR_CATALOGUE, isCoreErrorCode, type CoreErrorCode } from '../common/errors/error-catalogue';
import { problemType } from '../common/errors/problem-details';

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

export const PROBLEM_SCHEMA_NAME = 'ProblemDetails';

/** RFC 9457 problem details as every error answer carries them (src/common/errors/problem-details.ts). */
const PROBLEM_SCHEMA = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code', 'requestId'],
  properties: {
    type: { type: 'string', description: '`/problems/` and the code in kebab case.' },
    title: { type: 'string', description: 'The reason phrase of the status.' },
    status: { type: 'integer' },
    detail: { type: 'string', description: 'What went wrong, for people.' },
    code: { type: 'string', description: 'Stable and machine-readable; the README lists every code.' },
    requestId: { type: ['string', 'null'], description: 'Echo of `x-request-id`.' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'message'],
        properties: { index: { type: 'integer' }, field: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
};

/**
 * The codes an error answer of `status` documents: those its description names (each must be a
 * catalogue code of that status, or the document would promise a code the service never sends for
 * it), or, where it names none, every catalogue code of that status.
 */
export function problemCodesFor(status: number, description: string | undefined): CoreErrorCode[] {
  const named = [...new Set((description ?? '').match(/\b[A-Z][A-Z_]{3,}[A-Z]\b/g) ?? [])].filter(
    (word): word is CoreErrorCode => isCoreErrorCode(word) && ERROR_CATALOGUE[word].status === status,
  );
  return named.length > 0 ? named : codesForStatus(status);
}

/**
 * Gives every 4xx and 5xx answer the document lists an `application/problem+json` body with one
 * example per code from the error catalogue, so the codes a client can meet are named beside each
 * operation and agree with README.md's table.
 */
export function describeProblemAnswers(document: OpenAPIObject): void {
  document.components ??= {};
  document.components.schemas ??= {};
  document.components.schemas[PROBLEM_SCHEMA_NAME] = PROBLEM_SCHEMA as never;
  for (const item of Object.values(document.paths)) {
    for (const method of METHODS) {
      for (const [key, response] of Object.entries(item[method]?.responses ?? {})) {
        const status = Number(key);
        if (!response || !(status >= 400) || '$ref' in response || response.content) continue;
        const examples = Object.fromEntries(
          problemCodesFor(status, response.description).map((code) => [
            code,
            {
              summary: ERROR_CATALOGUE[code].meaning,
              value: {
                type: problemType(code),
                title: ERROR_CATALOGUE[code].title,
                status,
                detail: ERROR_CATALOGUE[code].meaning,
                code,
                requestId: '5f0c6a7e-0000-4000-8000-000000000000',
              },
            },
          ]),
        );
        response.content = {
          'application/problem+json': { schema: { $ref: `#/components/schemas/${PROBLEM_SCHEMA_NAME}` }, examples },
        };
      }
    }
  }
}
