/** The OAuth callback path; the redirect URI registered with authorization servers is `<public base URL>` + this. */
export const OAUTH_CALLBACK_PATH = '/v1/oauth/callback';

/**
 * `url` as the gateway logs it: the OAuth callback's query (an authorization
 * code and its state) is left out; any other URL is returned as it is.
 */
export function loggableUrl(url: string): string {
  const query = url.indexOf('?');
  if (query < 0 || url.slice(0, query) !== OAUTH_CALLBACK_PATH) return url;
  return `${OAUTH_CALLBACK_PATH}?[redacted]`;
}
