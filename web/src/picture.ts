// The fallback for a board the sanitiser cannot parse: an <img> with a data: URL runs no
// script, follows no handler and loads nothing else, whatever the document holds.
export function boardImageUrl(svg: string): string {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}
