/** The setup page's script parses (a slip in its template literal broke the whole page once). */
import { describe, expect, it } from 'vitest';
import { SETUP_JS, setupPage } from '../../src/api/http/setup-page.js';

describe('setup page', () => {
  it('serves a script that parses, and escapes the site name', () => {
    expect(() => new Function(SETUP_JS)).not.toThrow();
    const page = setupPage({ site: '<b>Millers</b>', available: true });
    expect(page).toContain('&lt;b&gt;Millers&lt;/b&gt;: setup');
    expect(page).not.toContain('<b>Millers');
    expect(page).not.toMatch(/<script>(?!<\/script>)/);
  });
});
