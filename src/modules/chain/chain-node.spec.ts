import {
  HttpRequestError,
  InvalidParamsRpcError,
  LimitExceededRpcError,
  ResponseBodyTooLargeError,
  RpcRequestError,
  TimeoutError,
  UnknownRpcError,
} from 'viem';
import { isRangeRefusal, isTimeout } from './chain-node';

const URL = 'http://node.test';
const answered = (code: number, message: string) => new RpcRequestError({ body: {}, error: { code, message }, url: URL });

describe('isRangeRefusal', () => {
  it.each([
    ['-32005 limit exceeded', new LimitExceededRpcError(answered(-32005, 'query returned more than 10000 results'))],
    ['-32602 invalid params (a span over the limit)', new InvalidParamsRpcError(answered(-32602, 'block range too large'))],
    ['-32000 with a range message', new UnknownRpcError(answered(-32000, 'exceed maximum block range: 5000'))],
    ['an answer over the client’s size bound', new ResponseBodyTooLargeError({ maxSize: 10, size: 20 })],
    ['HTTP 413', new HttpRequestError({ url: URL, status: 413, body: {} })],
  ])('halves the range on %s', (_name, error) => {
    expect(isRangeRefusal(error)).toBe(true);
  });

  it.each([
    ['a timeout', new TimeoutError({ body: {}, url: URL })],
    ['no answer at all', new HttpRequestError({ url: URL, body: {}, cause: new Error('fetch failed') })],
    ['HTTP 429 (rate limited)', new HttpRequestError({ url: URL, status: 429, body: {} })],
    ['HTTP 503', new HttpRequestError({ url: URL, status: 503, body: {} })],
    ['something that is no viem error', new Error('range')],
  ])('backs off on %s', (_name, error) => {
    expect(isRangeRefusal(error)).toBe(false);
  });
});

describe('isTimeout', () => {
  it('knows a call that did not answer in time, wrapped or not', () => {
    const timeout = new TimeoutError({ body: {}, url: URL });
    expect(isTimeout(timeout)).toBe(true);
    expect(isTimeout(new HttpRequestError({ url: URL, body: {}, cause: timeout }))).toBe(true);
    expect(isTimeout(new LimitExceededRpcError(answered(-32005, 'query returned more than 10000 results')))).toBe(false);
    expect(isTimeout(new Error('timed out'))).toBe(false);
  });
});
