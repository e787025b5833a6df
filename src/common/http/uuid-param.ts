import { Param, PipeTransform } from '@nestjs/common';
import { badRequest } from '../errors/domain-error';
import { UUID_PATTERN } from '../pagination/page-key';

/** Exported so the OpenAPI document can give the parameters it guards `format: uuid`. */
export class UuidPipe implements PipeTransform<string, string> {
  constructor(readonly name: string) {}

  transform(value: string): string {
    if (typeof value !== 'string' || !UUID_PATTERN.test(value)) {
      throw badRequest('INVALID_PATH_PARAMETER', `${this.name} must be a UUID.`, [{ field: this.name, message: 'must be a UUID' }]);
    }
    return value.toLowerCase();
  }
}

/** A path parameter that must be a UUID: anything else is a 400, never a database lookup. */
export const UuidParam = (name: string) => Param(name, new UuidPipe(name));
