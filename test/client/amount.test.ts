/**
 * formatAmount: sats by default, fiat with a price, exact beyond 2^53 msats (BigInt all the
 * way), and bad input refused with the package's InvalidArgumentError.
 */
import { expect } from 'chai';
import { formatAmount, InvalidArgumentError, satsOf } from '../../src/client/index.js';

const en = { locale: 'en-US' };

describe('client kit: formatAmount', () => {
  it('shows sats, with the thousands grouped and msats kept as a fraction', () => {
    expect(formatAmount('21000', en)).to.equal('21 sats');
    expect(formatAmount('1000', en)).to.equal('1 sat');
    expect(formatAmount('0', en)).to.equal('0 sats');
    expect(formatAmount('1234567000', en)).to.equal('1,234,567 sats');
    expect(formatAmount('21500', en)).to.equal('21.5 sats');
    expect(formatAmount('1', en)).to.equal('0.001 sats');
    expect(formatAmount(21_000n, en)).to.equal('21 sats');
    expect(formatAmount(21_000, en)).to.equal('21 sats');
    expect(formatAmount('-5000', en)).to.equal('-5 sats');
  });

  it('is exact past 2^53 msats', () => {
    // 2^53 + 1 msats: a Number would round it to 2^53.
    expect(formatAmount('9007199254740993', en)).to.equal('9,007,199,254,740.993 sats');
    expect(satsOf('9007199254740993')).to.equal('9007199254740.993');
    // 21 million BTC in msats.
    expect(formatAmount('2100000000000000000', en)).to.equal('2,100,000,000,000,000 sats');
  });

  it('shows fiat with a price, two significant digits under one unit', () => {
    const usd = { ...en, price: 100_000, currency: 'USD' };
    // 1 BTC = 10^11 msats, so 10^11 msats at $100,000 is $100,000.
    expect(formatAmount('100000000000', usd)).to.equal('$100,000.00');
    expect(formatAmount('21000', usd)).to.equal('$0.021');
    expect(formatAmount('1000', usd)).to.equal('$0.0010');
    expect(formatAmount('500000000', usd)).to.equal('$500.00');
    expect(formatAmount('12345678', usd)).to.equal('$12.35');
    expect(formatAmount('0', usd)).to.equal('$0.00');
    expect(formatAmount('-21000000', usd)).to.equal('-$21.00');
    expect(
      formatAmount('100000000000', { locale: 'de-DE', price: 50_000, currency: 'EUR' }),
    ).to.equal('50.000,00\u00a0€');
  });

  it('keeps fiat exact past 2^53 msats', () => {
    // $2,099,711,058,052.724917 exactly; through a Number it reads as .73.
    expect(
      formatAmount('2099711058052724917', { ...en, price: 100_000, currency: 'USD' }),
    ).to.equal('$2,099,711,058,052.72');
    expect(
      formatAmount('2100000000000000000', { ...en, price: 123_456.78, currency: 'USD' }),
    ).to.equal('$2,592,592,380,000.00');
  });

  it('takes the synced price as it is, and shows sats while no price is known', () => {
    expect(
      formatAmount('21000', { ...en, price: { btcPrice: 100_000, currency: 'USD' } }),
    ).to.equal('$0.021');
    expect(formatAmount('21000', { ...en, price: null })).to.equal('21 sats');
    expect(formatAmount('21000', { ...en, price: 0, currency: 'USD' })).to.equal('21 sats');
    expect(formatAmount('21000', { ...en, price: { btcPrice: 0, currency: 'USD' } })).to.equal(
      '21 sats',
    );
    expect(formatAmount('21000', { ...en, price: { btcPrice: 5, currency: '' } })).to.equal(
      '21 sats',
    );
  });

  it('refuses what is not an amount, a price or a currency, naming the field', () => {
    const refused = (f: () => unknown, field: string) => {
      expect(f).to.throw(InvalidArgumentError).with.property('field', field);
    };
    refused(() => formatAmount('12.5'), 'msat');
    refused(() => formatAmount(''), 'msat');
    refused(() => formatAmount('1e9'), 'msat');
    refused(() => formatAmount(1.5), 'msat');
    refused(() => formatAmount(2 ** 60), 'msat');
    refused(() => formatAmount(undefined as unknown as string), 'msat');
    refused(() => formatAmount('1', { price: -1, currency: 'USD' }), 'price');
    refused(() => formatAmount('1', { price: Number.NaN, currency: 'USD' }), 'price');
    refused(() => formatAmount('1', { price: 100 }), 'currency');
    refused(() => formatAmount('1', { price: 100, currency: 'dollars' }), 'currency');
  });
});
