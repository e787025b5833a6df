import { Migration20261122000000Foundation } from './Migration20261122000000Foundation';

/** Applied in this order; add each new migration here. */
export const MIGRATIONS = [
  { name: 'Migration20261122000000Foundation', class: Migration20261122000000Foundation },
];
