/**
 * The MCP Apps extension (`io.modelcontextprotocol/ui`, SEP-1865, stable
 * 2026-01-26) as the host reads it. Pure. A tool is an app tool when its
 * `_meta.ui.resourceUri` (or the legacy `_meta["ui/resourceUri"]`) names a
 * `ui://` resource; its `_meta.ui.visibility` says who may call it
 * (`model`, `app`; default both). The constants are the extension's
 * (`@modelcontextprotocol/ext-apps`), copied: its 2.x package runs on the v2
 * MCP SDK, and the host needs nothing else from it.
 */

/** The extension's identifier. */
export const MCP_APPS_EXTENSION_ID = 'io.modelcontextprotocol/ui';
/** The MIME type of a UI resource. */
export const MCP_APP_MIME_TYPE = 'text/html;profile=mcp-app';
/** The legacy tool `_meta` key of the UI resource (hosts must still read it). */
export const LEGACY_RESOURCE_URI_KEY = 'ui/resourceUri';
/** Who may call an app tool. */
export type AppVisibility = 'model' | 'app';
/** How a view is shown: the extension's display modes; a view starts `inline`. */
export const DISPLAY_MODES = ['inline', 'fullscreen', 'pip'] as const;
export type DisplayMode = (typeof DISPLAY_MODES)[number];

/** What the host reads of a tool's `_meta.ui`. */
export interface AppToolMeta {
  /** The `ui://` resource of the tool's view; absent: not an app tool. */
  readonly resourceUri?: string;
  readonly visibility: readonly AppVisibility[];
  readonly displayMode: DisplayMode;
}

/** A tool as listed by a server (the members read here). */
export interface ListedAppTool {
  readonly name: string;
  readonly _meta?: Record<string, unknown> | undefined;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The tool's app metadata. A `resourceUri` outside the `ui://` scheme is
 * ignored (not an app tool); a visibility that names neither value, or is
 * not a list, counts as the default (both); a display mode other than the
 * extension's three counts as `inline`.
 */
export function appMetaOf(tool: ListedAppTool): AppToolMeta {
  const meta = isRecord(tool._meta) ? tool._meta : {};
  const ui = isRecord(meta.ui) ? meta.ui : {};
  const declared = typeof ui.resourceUri === 'string' ? ui.resourceUri : meta[LEGACY_RESOURCE_URI_KEY];
  const resourceUri = typeof declared === 'string' && declared.startsWith('ui://') ? declared : undefined;
  const listed = Array.isArray(ui.visibility)
    ? ui.visibility.filter((v): v is AppVisibility => v === 'model' || v === 'app')
    : [];
  const mode = DISPLAY_MODES.find((m) => m === ui.displayMode) ?? 'inline';
  return {
    ...(resourceUri === undefined ? {} : { resourceUri }),
    visibility: listed.length > 0 ? [...new Set(listed)] : ['model', 'app'],
    displayMode: mode,
  };
}

/** False for a tool only an app may call: runs neither see nor call it. */
export function visibleToModel(tool: ListedAppTool): boolean {
  return appMetaOf(tool).visibility.includes('model');
}

/** True for a tool an app's view may call (`mcp.apps.call_tool`). */
export function callableByApp(tool: ListedAppTool): boolean {
  return appMetaOf(tool).visibility.includes('app');
}

/** The CSP sources a UI resource declares (`_meta.ui.csp`), as the extension names them. */
interface DeclaredCsp {
  readonly connectDomains?: readonly string[];
  readonly resourceDomains?: readonly string[];
  readonly frameDomains?: readonly string[];
  readonly baseUriDomains?: readonly string[];
}

/** Origins only: a declared entry with a space, a quote or a semicolon would change the policy's shape. */
const sources = (value: unknown): string[] =>
  Array.isArray(value)
    ? value.filter((v): v is string => typeof v === 'string' && /^[^\s;'",]{1,256}$/.test(v)).slice(0, 50)
    : [];

/**
 * The Content-Security-Policy of a sandboxed view: nothing beyond its own
 * inline code and what the resource declares (no network by default).
 */
export function viewCsp(resourceMeta: Record<string, unknown> | undefined): string {
  const csp = (isRecord(resourceMeta?.csp) ? resourceMeta.csp : {}) as DeclaredCsp;
  const list = (base: string[], extra: unknown) => [...base, ...sources(extra)].join(' ');
  return [
    `default-src 'none'`,
    `script-src ${list([`'self'`, `'unsafe-inline'`], csp.resourceDomains)}`,
    `style-src ${list([`'self'`, `'unsafe-inline'`], csp.resourceDomains)}`,
    `img-src ${list([`'self'`, 'data:'], csp.resourceDomains)}`,
    `font-src ${list([`'self'`], csp.resourceDomains)}`,
    `media-src ${list([`'self'`, 'data:'], csp.resourceDomains)}`,
    `connect-src ${sources(csp.connectDomains).join(' ') || `'none'`}`,
    `frame-src ${sources(csp.frameDomains).join(' ') || `'none'`}`,
    `base-uri ${sources(csp.baseUriDomains).join(' ') || `'self'`}`,
  ].join('; ');
}

/** The iframe `sandbox` attribute of a view: scripts and forms, never same-origin, never top navigation. */
export const VIEW_IFRAME_SANDBOX = 'allow-scripts allow-forms';
