import { describe, expect, it } from 'vitest';
import { CelRuntimeError, compileExpression, kubernetesCelEnvironment } from '../cel.js';

// Upstream's documented examples of each Kubernetes CEL library (k8s.io/apiserver/pkg/cel/library
// docs), each as an expression that must be true, or an expression that must fail (at load or
// when run) with the message given.
const env = kubernetesCelEnvironment({ self: 'dyn' });
const run = (source: string, self: unknown = {}) => compileExpression(env, source, 'p').run({ self });

const TRUE: Record<string, string[]> = {
  lists: [
    '[1, 2, 3].isSorted()',
    "['a', 'b', 'b', 'c'].isSorted()",
    '![2.0, 1.0].isSorted()',
    '[1, 2, 3].sum() == 6',
    '[1.0, 2.5].sum() == 3.5',
    '[duration("1s"), duration("2s")].sum() == duration("3s")',
    '[].sum() == 0',
    '[1, 2, 3].min() == 1 && [1, 2, 3].max() == 3',
    "['b', 'a', 'c'].min() == 'a'",
    '[1, 2, 2, 3].indexOf(2) == 1 && [1, 2, 2, 3].lastIndexOf(2) == 2',
    "['a'].indexOf('z') == -1",
    '[[1], [2]].indexOf([2]) == 1',
    'self.items.isSorted() && self.items.max() == 3',
  ],
  regex: [
    "'abc 123'.find('[0-9]+') == '123'",
    "'abc'.find('xyz') == ''",
    "'123 abc 456'.findAll('[0-9]+') == ['123', '456']",
    "'123 abc 456'.findAll('[0-9]+', 1) == ['123']",
    "'123 abc 456'.findAll('xyz') == []",
    "'123 abc 456'.findAll('[0-9]+', 0) == []",
    "matches('abc', '^a')",
  ],
  strings: [
    "'hello'.charAt(1) == 'e' && 'hello'.charAt(5) == ''",
    "'a-b-c'.replace('-', '+') == 'a+b+c' && 'a-b-c'.replace('-', '+', 1) == 'a+b-c'",
    "'%s is %d, %.2f'.format(['x', 3, 1.5]) == 'x is 3, 1.50'",
    "'%x'.format([255]) == 'ff' && '%%'.format([]) == '%'",
    'strings.quote(\'a"b\\n\') == \'"a\\\\"b\\\\n"\'',
    "'Hello'.lowerAscii() == 'hello' && ['a', 'b'].join('-') == 'a-b' && 'a,b'.split(',') == ['a', 'b']",
    "' x '.trim() == 'x' && 'hello'.substring(1, 3) == 'el' && 'hello'.indexOf('l') == 2",
  ],
  url: [
    "url('https://example.com:80/').getHost() == 'example.com:80'",
    "url('https://example.com/path').getScheme() == 'https'",
    "url('https://example.com:80/').getHostname() == 'example.com'",
    "url('https://[::1]:80/').getHostname() == '::1'",
    "url('https://example.com:80/').getPort() == '80' && url('https://example.com/').getPort() == ''",
    "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'",
    "url('https://example.com').getEscapedPath() == ''",
    "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}",
    "url('/absolute-path').getHost() == '' && url('/absolute-path').getEscapedPath() == '/absolute-path'",
    "isURL('https://example.com/') && !isURL(':invalid') && !isURL('../relative-path')",
    "url('https://example.com/') == url('https://example.com/')",
  ],
  quantity: [
    "quantity('50000000G').isInteger()",
    "!quantity('50.5').isInteger()",
    "quantity('50k').asInteger() == 50000",
    "quantity('50.703k').asApproximateFloat() == 50703.0",
    "quantity('50k').sign() == 1 && quantity('-50k').sign() == -1 && quantity('0').sign() == 0",
    "quantity('50M').isGreaterThan(quantity('100k')) && quantity('100k').isLessThan(quantity('50M'))",
    "quantity('50k').compareTo(quantity('50000')) == 0 && quantity('50k').compareTo(quantity('60k')) == -1",
    "quantity('50k').add(20) == quantity('50020') && quantity('50k').add(quantity('20k')) == quantity('70k')",
    "quantity('50k').sub(20) == quantity('49980') && quantity('50k').sub(quantity('20k')) == quantity('30k')",
    "quantity('1Gi') == quantity('1073741824')",
    "isQuantity('1.3G') && isQuantity('1e3') && !isQuantity('1.3X') && !isQuantity('')",
  ],
  ip: [
    "isIP('127.0.0.1') && isIP('::1') && !isIP('127.0.0.256') && !isIP('127.0.0.01')",
    "!isIP('fe80::1%eth0') && !isIP('::ffff:1.2.3.4')",
    "ip('127.0.0.1').family() == 4 && ip('::1').family() == 6",
    "ip.isCanonical('127.0.0.1') && ip.isCanonical('2001:db8::abcd') && !ip.isCanonical('2001:DB8::ABCD') && !ip.isCanonical('2001:db8::0:0:0:abcd')",
    "ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified() && !ip('127.0.0.1').isUnspecified()",
    "ip('127.0.0.1').isLoopback() && ip('::1').isLoopback() && !ip('1.2.3.4').isLoopback()",
    "ip('224.0.0.1').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast() && !ip('224.0.1.1').isLinkLocalMulticast()",
    "ip('169.254.169.254').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast() && !ip('192.168.0.1').isLinkLocalUnicast()",
    "ip('192.168.0.1').isGlobalUnicast() && ip('2001:db8::abcd').isGlobalUnicast() && !ip('255.255.255.255').isGlobalUnicast() && !ip('ff00::1').isGlobalUnicast()",
    "string(ip('2001:DB8::ABCD')) == '2001:db8::abcd' && ip('127.0.0.1') == ip('127.0.0.1')",
  ],
  cidr: [
    "isCIDR('192.168.0.0/24') && !isCIDR('192.168.0.0/33') && !isCIDR('192.168.0.0')",
    "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1')) && cidr('192.168.0.0/24').containsIP('192.168.0.1') && !cidr('192.168.0.0/24').containsIP('192.168.1.1')",
    "cidr('192.168.0.0/24').containsCIDR(cidr('192.168.0.0/25')) && cidr('192.168.0.0/24').containsCIDR('192.168.0.128/25') && !cidr('192.168.0.0/24').containsCIDR('192.168.0.0/23')",
    "cidr('::1/128').containsIP('::1') && !cidr('::1/128').containsIP('127.0.0.1')",
    "cidr('192.168.0.0/24').prefixLength() == 24 && cidr('192.168.0.1/24').ip() == ip('192.168.0.1')",
    "cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24') && string(cidr('::1/128')) == '::1/128'",
    "cidr('2001:db8::1/32').masked() == cidr('2001:db8::/32')",
  ],
  format: [
    "!format.dns1123Label().validate('my-label-name').hasValue()",
    "format.dns1123Label().validate('MY_LABEL').hasValue()",
    "format.named('dns1123Subdomain').hasValue() && !format.named('nope').hasValue()",
    "format.named('dns1123Label').value().validate('a.b').value().size() >= 1",
    "!format.dns1123LabelPrefix().validate('my-prefix-').hasValue()",
    "!format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue() && format.uuid().validate('x').hasValue()",
    "!format.date().validate('2024-02-29').hasValue() && format.date().validate('2023-02-29').hasValue()",
    "!format.datetime().validate('2024-02-29T10:00:00Z').hasValue() && !format.byte().validate('aGk=').hasValue()",
    "!format.labelValue().validate('').hasValue() && !format.qualifiedName().validate('example.com/x').hasValue() && !format.uri().validate('https://x/').hasValue()",
  ],
  'standard conversions': [
    "int(timestamp('2009-02-13T23:31:30Z')) == 1234567890 && string(timestamp('2009-02-13T23:31:30.5Z')) == '2009-02-13T23:31:30.5Z'",
    "string(duration('1m')) == '60s' && string(duration('-1.5s')) == '-1.5s' && string(duration('1ms')) == '0.001s'",
    'int(3u) == 3',
  ],
  sets: [
    'sets.contains([1, 2, 3], [2, 3]) && !sets.contains([1], [2])',
    'sets.equivalent([1, 2], [2, 1, 1]) && !sets.equivalent([1], [1, 2])',
    'sets.intersects([1, 2], [2, 5]) && !sets.intersects([1], [3])',
  ],
};

const FAILS: Array<[string, RegExp]> = [
  ['[].min() == 1', /min called on empty list/],
  ["'x'.find('[')", /error parsing regexp/],
  ["url('../relative') == url('/x')", /URL parse error/],
  ["quantity('1.3X').sign() == 1", /quantities must match/],
  ["quantity('50.5').asInteger() == 50", /cannot convert value to integer/],
  ["ip('::ffff:1.2.3.4').family() == 6", /IPv4-mapped IPv6 address is not allowed/],
  ["ip('fe80::1%eth0').family() == 6", /zone value is not allowed/],
  ["cidr('1.2.3.4/40').prefixLength() == 0", /bad bits after slash/],
  ["'%d'.format(['x']) == ''", /decimal clause can only be used on integers/],
  ["'ab'.charAt(3) == ''", /index out of range/],
];

describe('Kubernetes CEL libraries', () => {
  for (const [library, cases] of Object.entries(TRUE)) {
    it.each(cases)(`${library}: %s`, (source) => {
      expect(run(source, { items: [1n, 2n, 3n] })).toBe(true);
    });
  }

  it.each(FAILS)('fails: %s', (source, message) => {
    expect(() => run(source)).toThrow(CelRuntimeError);
    expect(() => run(source)).toThrow(message);
  });

  it('type checks library calls at load', () => {
    expect(() => compileExpression(env, "quantity('1').add('x')", 'p')).toThrow(/compilation failed/);
    expect(() => compileExpression(env, "ip('1.2.3.4').containsIP('x')", 'p')).toThrow(/compilation failed/);
    expect(compileExpression(env, "cidr('10.0.0.0/8').containsIP(ip('10.1.2.3'))", 'p').type).toBe('bool');
    expect(compileExpression(env, "url('https://x/').getQuery()", 'p').type).toBe('map<string, list<string>>');
  });
});

describe('string.matches under kubernetesCelEnvironment', () => {
  it('runs RE2 (linear time): a pattern that backtracks exponentially in JavaScript answers at once', () => {
    const e = compileExpression(env, "self.matches('^(a+)+$')", 'p', ['bool']);
    expect(e.run({ self: `${'a'.repeat(40)}!` })).toBe(false);
    expect(e.run({ self: 'aaa' })).toBe(true);
  });

  it('keeps RE2 syntax errors as evaluation errors, and keeps macros and optionals around it intact', () => {
    expect(() => compileExpression(env, "self.matches('(?<=a)b')", 'p').run({ self: 'ab' })).toThrow(/error parsing regexp/);
    const e = compileExpression(env, "self.?items.orValue([]).all(x, x.matches('^[a-z]+$')) && 1.5 < 2.0", 'p', ['bool']);
    expect(e.run({ self: { items: ['ab', 'cd'] } })).toBe(true);
    expect(e.run({ self: { items: ['ab', 'C'] } })).toBe(false);
    expect(e.run({ self: {} })).toBe(true);
  });
});
