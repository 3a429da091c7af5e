import { describe, expect, it } from 'vitest';
import { appMetaOf, callableByApp, viewCsp, visibleToModel } from '../../src/mcp/apps.ts';

describe('MCP Apps metadata of a tool', () => {
  it('reads _meta.ui: the ui:// resource, the visibility (default both) and the display mode (default inline)', () => {
    expect(appMetaOf({ name: 't', _meta: { ui: { resourceUri: 'ui://a/view.html' } } })).toEqual({
      resourceUri: 'ui://a/view.html',
      visibility: ['model', 'app'],
      displayMode: 'inline',
    });
    const appOnly = { name: 't', _meta: { ui: { resourceUri: 'ui://a/v', visibility: ['app'], displayMode: 'pip' } } };
    expect(appMetaOf(appOnly)).toMatchObject({ visibility: ['app'], displayMode: 'pip' });
    expect([visibleToModel(appOnly), callableByApp(appOnly)]).toEqual([false, true]);
  });

  it('reads the legacy ui/resourceUri key', () => {
    expect(appMetaOf({ name: 't', _meta: { 'ui/resourceUri': 'ui://legacy/v' } }).resourceUri).toBe('ui://legacy/v');
  });

  it('ignores a resource outside the ui:// scheme, an unknown visibility and an unknown display mode', () => {
    const odd = {
      name: 't',
      _meta: { ui: { resourceUri: 'https://x/v', visibility: ['admin'], displayMode: 'modal' } },
    };
    expect(appMetaOf(odd)).toEqual({ visibility: ['model', 'app'], displayMode: 'inline' });
    expect(appMetaOf({ name: 'plain' })).toEqual({ visibility: ['model', 'app'], displayMode: 'inline' });
    expect(visibleToModel({ name: 't', _meta: { ui: { visibility: 'app' } } })).toBe(true);
  });
});

describe('the Content-Security-Policy of a sandboxed view', () => {
  it('allows no network without declared domains', () => {
    const csp = viewCsp(undefined);
    expect(csp).toContain(`default-src 'none'`);
    expect(csp).toContain(`connect-src 'none'`);
    expect(csp).toContain(`frame-src 'none'`);
  });

  it('adds the declared origins, and drops entries that would change the policy', () => {
    const csp = viewCsp({
      csp: {
        connectDomains: ['https://api.example.com', "https://x; script-src 'unsafe-eval'"],
        resourceDomains: ['https://cdn.example.com'],
      },
    });
    expect(csp).toContain('connect-src https://api.example.com;');
    expect(csp).toContain(`script-src 'self' 'unsafe-inline' https://cdn.example.com`);
    expect(csp).not.toContain('unsafe-eval');
  });
});
