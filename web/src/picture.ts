// The board arrives as an SVG document from the gateway. It is shown as an <img> with a
// data: URL, never inserted into the page: an image runs no script, follows no handler and
// loads nothing else, whatever the document holds.
export function boardImageUrl(svg: string): string {
  return `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
}
