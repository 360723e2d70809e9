import { describe, it, expect } from 'vitest';
import { negotiate, parseAccept, requestMediaType, type Offer } from './negotiation.js';
import { StatusError } from '../apierrors/status.js';

const offers: Offer<string>[] = [
  { mediaType: 'application/json', value: 'json' },
  { mediaType: 'application/yaml', value: 'yaml' },
  { mediaType: 'application/vnd.cluster.protobuf', value: 'proto' },
  { mediaType: 'application/json', value: 'table', accepts: (r) => r.params.as === 'Table' && r.params.g === 'meta.cluster.io' && r.params.v === 'v1' },
];

describe('negotiate', () => {
  it.each([
    [undefined, 'json'],
    ['', 'json'],
    ['*/*', 'json'],
    ['application/*', 'json'],
    ['application/yaml', 'yaml'],
    ['application/yaml, application/json', 'yaml'],
    ['application/json;q=0.5, application/yaml', 'yaml'],
    ['text/html, application/vnd.cluster.protobuf, application/json', 'proto'],
    ['application/json;as=Table;g=meta.cluster.io;v=v1', 'table'],
    ['application/json;as=Table;g=meta.cluster.io;v=v1, application/json', 'table'],
    ['application/json;as=Table;v=v1;g=meta.other.io, application/json', 'json'],
    ['application/json;charset=utf-8', 'json'],
    ['application/yaml;q=0, */*', 'json'],
    // Unknown parameters are ignored, as upstream; as/g/v always ask for a conversion.
    ['application/json;foo=bar', 'json'],
    ['application/yaml;pretty=1;x=y', 'yaml'],
    ['application/json;stream=watch', 'json'],
    ['application/json;as=Table;g=meta.cluster.io;v=v1;extra=1', 'table'],
    // A specific type beats a wildcard of the same q wherever it stands.
    ['*/*, application/yaml', 'yaml'],
    ['application/*, application/yaml', 'yaml'],
    ['*/*;q=0.9, application/yaml;q=0.5', 'json'],
  ])('Accept %j → %s', (accept, expected) => {
    expect(negotiate(accept, offers).offer.value).toBe(expected);
  });

  it.each([
    ['text/html'],
    ['application/xml'],
    ['application/json;as=Table;g=meta.other.io;v=v1'],
    ['application/json;q=0'],
    ['application/json;v=v1'],
    ['application/json;as=Table;v=v1'],
    ['application/json;stream=other'],
    ['application/json;sv=v1'],
  ])(
    'Accept %j → 406',
    (accept) => {
      try {
        negotiate(accept, offers);
        expect.unreachable();
      } catch (e) {
        expect((e as StatusError).status.code).toBe(406);
      }
    },
  );

  it('orders by q then by position', () => {
    expect(parseAccept('a/b;q=0.2, c/d, e/f;q=0.9').map((r) => `${r.type}/${r.subtype}`)).toEqual(['c/d', 'e/f', 'a/b']);
  });

  it('reads request content types', () => {
    expect(requestMediaType(undefined).mediaType).toBe('application/json');
    expect(requestMediaType('application/yaml; charset=utf-8').mediaType).toBe('application/yaml');
  });
});
