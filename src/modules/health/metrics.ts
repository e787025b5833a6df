// Moved to src/common/metrics.ts; kept while other branches still import it from here.
export * from '../../common/metrics';
