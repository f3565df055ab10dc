/**
 * The client kit as a browser gets it: one esbuild bundle of src/client/index.ts for the
 * browser platform, nothing external, minified. It must build (no `node:` module can be in
 * it), hold nothing of the server side or of Colyseus, and stay under the goal of issue 25:
 * 25 KB, QR included. `npm run build` prints the same measure of dist/.
 */
import { expect } from 'chai';
import { build } from 'esbuild';

describe('client kit: the browser bundle', () => {
  it('builds for the browser with nothing external, from the kit, the error tree, bech32 and uqr only, under 25 KB', async () => {
    const bundle = await build({
      entryPoints: ['src/client/index.ts'],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      minify: true,
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const inputs = Object.keys(bundle.metafile.inputs);
    const outside = inputs.filter(
      (file) =>
        !/^src\/client\//.test(file) &&
        file !== 'src/errors.ts' &&
        !/node_modules\/(bech32|uqr)\//.test(file),
    );
    expect(outside).to.deep.equal([]);
    expect(inputs.some((file) => file.includes('uqr'))).to.equal(true);
    const bytes = bundle.outputFiles[0]?.contents.length ?? 0;
    expect(bytes)
      .to.be.above(5_000)
      .and.below(25 * 1024);
  });
});
