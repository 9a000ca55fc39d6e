// Playing on the board's picture: the elements a legal move is made on are marked; a click
// picks one, and a move whose every element is picked is played (or offered, with the few
// others that share those elements, in a small menu; a move that changes other elements,
// e.g. the cubes a room would collect, shows them and waits for a confirmation). A move with
// pointer parameters is a drag from its element (a flick: direction and strength, shown while
// dragging) or a point on the picture (where a piece goes). Moves made on no element (end
// the turn) are a bar of buttons above the picture, for the mouse (and a phone, where the
// list of moves is below the picture); the list beside the board stays the way to play by
// keyboard or screen reader.
import type { LegalAction } from "./gen/tabletop/v1/match_pb";
import {
  type Choice,
  type Move,
  type Pointer,
  choose,
  describeValues,
  movesOffPicture,
  movesOnPicture,
  pointerKind,
  pointerValues,
} from "./picking";

const SVG_NS = "http://www.w3.org/2000/svg";
/** a press that moves less than this (screen px) is a click, not a drag */
const CLICK_SLOP = 6;
const MARKS = ["playable", "picked", "affected"] as const;

export type Play = (move: Move, values: Record<string, number>) => void;

interface Press {
  id: string; // the element pressed on
  pointerId: number;
  start: { x: number; y: number }; // client px
  at: Pointer; // picture units
  moves: Move[]; // the moves a drag from it would make
  dragging: boolean;
}

export class PictureMoves {
  private svg: SVGSVGElement | undefined;
  private moves: Move[] = [];
  private others: Move[] = []; // made on no element: the bar
  private picked: string[] = [];
  private choice: Choice = { candidates: [], next: new Set(), complete: [] };
  private awaitingPoint: Move | undefined; // picked; the next click says where
  private press: Press | undefined;
  private overlay: SVGGElement | undefined;
  private anchor = { x: 0, y: 0 }; // the last click (client px): the menu opens there
  private readonly menu: HTMLElement;

  constructor(
    private readonly board: HTMLElement,
    private readonly hint: HTMLElement,
    private readonly bar: HTMLElement,
    private readonly prefix: string,
    private readonly play: Play,
  ) {
    this.menu = document.createElement("div");
    this.menu.id = "picked-moves";
    this.menu.hidden = true;
    this.menu.setAttribute("role", "group");
    this.menu.setAttribute("aria-label", "Moves with the picked pieces");
    board.addEventListener("pointerdown", (e) => this.down(e));
    board.addEventListener("pointermove", (e) => this.move(e));
    board.addEventListener("pointerup", (e) => this.up(e));
    board.addEventListener("pointercancel", () => this.endPress());
    document.addEventListener("keydown", (e) => {
      if (e.key === "Escape" && (this.picked.length || this.awaitingPoint)) this.reset();
    });
  }

  /** Offer ``legal`` on ``svg`` (the picture of the same version, already in the page). */
  offer(svg: SVGSVGElement, legal: LegalAction[]): void {
    this.svg = svg;
    this.moves = movesOnPicture(legal);
    this.others = movesOffPicture(legal);
    this.board.append(this.menu);
    this.reset();
  }

  /** Nothing is playable (another seat's turn, a replay, a spectator). */
  clear(): void {
    this.svg = undefined;
    this.moves = [];
    this.others = [];
    this.reset();
  }

  private element(id: string): Element | null {
    return this.svg?.querySelector(`#${CSS.escape(this.prefix + id)}`) ?? null;
  }

  private reset(): void {
    this.picked = [];
    this.awaitingPoint = undefined;
    this.endPress();
    this.update();
  }

  private update(): void {
    this.choice = choose(this.moves, this.picked);
    for (const mark of MARKS) {
      for (const e of Array.from(this.svg?.querySelectorAll(`.${mark}`) ?? [])) e.classList.remove(mark);
    }
    const mark = (ids: Iterable<string>, name: (typeof MARKS)[number]) => {
      for (const id of ids) this.element(id)?.classList.add(name);
    };
    if (!this.awaitingPoint) mark(this.choice.next, "playable");
    mark(this.picked, "picked");
    mark(this.choice.complete.flatMap((m) => m.affects), "affected");
    this.showMenu();
    this.showBar();
    if (!this.svg || this.moves.length === 0) this.hint.textContent = "";
    else if (this.awaitingPoint) this.hint.textContent = `Click where: ${this.awaitingPoint.label} (Esc cancels).`;
    else if (this.picked.length === 0) {
      const drag = this.moves.some((m) => pointerKind(m) === "drag");
      this.hint.textContent = `Click a marked piece to play it${drag ? ", or drag from it to flick it" : ""}.`;
    }
    else {
      const names = this.picked.map((id) => this.name(id)).join(", ");
      this.hint.textContent = `Picked ${names}: pick a marked piece to go on (Esc, or a click elsewhere on the board, undoes the picks).`;
    }
  }

  /** The element's own title, as the picture names it. */
  private name(id: string): string {
    const title = this.element(id)?.querySelector(":scope > title");
    return title?.textContent?.trim() || id;
  }

  /** The moves whose elements are all picked, as buttons (they play when pressed). */
  private showMenu(): void {
    const offered = this.awaitingPoint ? [] : this.choice.complete.filter((m) => pointerKind(m) === "none");
    this.menu.replaceChildren();
    this.menu.hidden = offered.length === 0;
    if (this.menu.hidden) return;
    for (const move of offered) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = move.label;
      b.addEventListener("click", () => this.make(move, {}));
      const highlight = (on: boolean) => {
        for (const id of move.affects) this.element(id)?.classList.toggle("affected-now", on);
      };
      b.addEventListener("pointerenter", () => highlight(true));
      b.addEventListener("pointerleave", () => highlight(false));
      b.addEventListener("focus", () => highlight(true));
      b.addEventListener("blur", () => highlight(false));
      this.menu.append(b);
    }
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.className = "cancel";
    cancel.textContent = "Cancel";
    cancel.addEventListener("click", () => this.reset());
    this.menu.append(cancel);
    // Below the click, within the board.
    const box = this.board.getBoundingClientRect();
    const width = Math.min(384, box.width);
    this.menu.style.left = `${Math.max(0, Math.min(this.anchor.x - box.left, box.width - width))}px`;
    this.menu.style.top = `${Math.max(0, this.anchor.y - box.top + 16)}px`;
    this.menu.style.width = `${width}px`;
  }

  /** The moves made on no element, while nothing is picked. */
  private showBar(): void {
    const shown = this.picked.length === 0 && !this.awaitingPoint ? this.others : [];
    this.bar.replaceChildren(
      ...shown.map((move) => {
        const b = document.createElement("button");
        b.type = "button";
        b.tabIndex = -1; // the list of moves is the keyboard's (and screen readers') way
        b.textContent = move.label;
        b.addEventListener("click", () => this.make(move, {}));
        return b;
      }),
    );
    this.bar.hidden = shown.length === 0;
  }

  private make(move: Move, values: Record<string, number>): void {
    this.moves = []; // until the next view offers moves again
    this.others = [];
    this.reset();
    this.play(move, values);
  }

  /** The picture's coordinates of a point on the screen. */
  private toPicture(clientX: number, clientY: number): { x: number; y: number } {
    const ctm = this.svg?.getScreenCTM();
    if (!ctm) return { x: 0, y: 0 };
    const p = new DOMPoint(clientX, clientY).matrixTransform(ctm.inverse());
    return { x: p.x, y: p.y };
  }

  /** The topmost element under the pointer whose id is one of ``ids`` (a cube lying on
   * the table is found before the table; a card's text finds its card). */
  private hit(e: PointerEvent, ids: Set<string>): string | undefined {
    for (const under of document.elementsFromPoint(e.clientX, e.clientY)) {
      for (let el: Element | null = under; el && el !== this.svg; el = el.parentElement) {
        const id = el.id.startsWith(this.prefix) ? el.id.slice(this.prefix.length) : "";
        if (ids.has(id)) return id;
      }
    }
    return undefined;
  }

  private down(e: PointerEvent): void {
    if (!this.svg || this.moves.length === 0 || e.button !== 0) return;
    if (this.menu.contains(e.target as Node)) return;
    const at = this.toPicture(e.clientX, e.clientY);
    if (this.awaitingPoint) {
      this.startPress(e, "", [this.awaitingPoint], at);
      return;
    }
    const id = this.hit(e, new Set([...this.choice.next, ...this.picked]));
    if (id === undefined) {
      if (this.picked.length) this.reset(); // a click beside the marks: start again
      return;
    }
    if (this.picked.includes(id)) {
      this.picked = this.picked.filter((p) => p !== id); // a second click unpicks
      this.update();
      return;
    }
    const complete = choose(this.moves, [...this.picked, id]).complete;
    this.startPress(e, id, complete.filter((m) => pointerKind(m) !== "none"), at);
    e.preventDefault(); // no text selection, no scrolling while dragging a piece
  }

  private startPress(e: PointerEvent, id: string, moves: Move[], at: { x: number; y: number }): void {
    this.press = {
      id,
      pointerId: e.pointerId,
      start: { x: e.clientX, y: e.clientY },
      at: { x0: at.x, y0: at.y, x: at.x, y: at.y },
      moves,
      dragging: false,
    };
    this.board.setPointerCapture?.(e.pointerId);
  }

  private move(e: PointerEvent): void {
    const press = this.press;
    if (!press || e.pointerId !== press.pointerId || press.moves.length === 0) return;
    if (!press.dragging && Math.hypot(e.clientX - press.start.x, e.clientY - press.start.y) < CLICK_SLOP) return;
    press.dragging = true;
    const p = this.toPicture(e.clientX, e.clientY);
    press.at = { ...press.at, x: p.x, y: p.y };
    this.drawDrag(press);
  }

  private up(e: PointerEvent): void {
    const press = this.press;
    if (!press || e.pointerId !== press.pointerId) return;
    const p = this.toPicture(e.clientX, e.clientY);
    const at: Pointer = { ...press.at, x: p.x, y: p.y };
    const dragged = press.dragging || Math.hypot(e.clientX - press.start.x, e.clientY - press.start.y) >= CLICK_SLOP;
    this.endPress();
    this.anchor = { x: e.clientX, y: e.clientY };
    if (this.awaitingPoint) {
      this.make(this.awaitingPoint, pointerValues(this.awaitingPoint.params, { ...at, x0: at.x, y0: at.y }));
      return;
    }
    const move = press.moves[0];
    if (dragged && move) {
      this.make(move, pointerValues(move.params, at));
      return;
    }
    this.pick(press.id, at);
  }

  /** A click on ``id``: picked; the move it completes is made, offered or awaits a point. */
  private pick(id: string, at: Pointer): void {
    this.picked.push(id);
    const choice = choose(this.moves, this.picked);
    const pointed = choice.complete.filter((m) => pointerKind(m) === "point");
    const dragged = choice.complete.filter((m) => pointerKind(m) === "drag");
    const plain = choice.complete.filter((m) => pointerKind(m) === "none");
    if (pointed.length === 1 && this.isSurface(id)) {
      // a click on the table itself: there
      this.make(pointed[0], pointerValues(pointed[0].params, at));
      return;
    }
    if (pointed.length === 1 && plain.length === 0) this.awaitingPoint = pointed[0];
    const alone = choice.candidates.length === 1 && plain.length === 1;
    if (alone && plain[0].affects.length === 0) {
      this.make(plain[0], {});
      return;
    }
    this.update();
    if (dragged.length && plain.length === 0 && choice.candidates.length === dragged.length) {
      this.picked = [];
      this.update();
      this.hint.textContent = `Drag from ${this.name(id)} to ${dragged[0].label}: its direction and length set the move's.`;
    }
  }

  /** An element most of the picture's width (the table), where a click is a place. */
  private isSurface(id: string): boolean {
    const element = this.element(id);
    if (!element || !this.svg) return false;
    return element.getBoundingClientRect().width >= 0.5 * this.svg.getBoundingClientRect().width;
  }

  private endPress(): void {
    if (this.press) this.board.releasePointerCapture?.(this.press.pointerId);
    this.press = undefined;
    this.overlay?.remove();
    this.overlay = undefined;
  }

  /** The drag as it would be played: an arrow (clamped to the move's ranges) and its values. */
  private drawDrag(press: Press): void {
    const svg = this.svg;
    const move = press.moves[0];
    if (!svg || !move) return;
    const values = pointerValues(move.params, press.at);
    const unit = 1 / (svg.getScreenCTM()?.a || 1); // one screen px in picture units
    let end = { x: press.at.x, y: press.at.y };
    if (pointerKind(move) === "drag") {
      const length = move.params.find((p) => p.picture?.measure === "length");
      const angle = move.params.find((p) => p.picture?.measure === "angle");
      const drawnAngle = angle?.picture
        ? (values[angle.name] - angle.picture.offset) / (angle.picture.scale || 1)
        : (Math.atan2(-(press.at.y - press.at.y0), press.at.x - press.at.x0) * 180) / Math.PI;
      const drawnLength = length?.picture
        ? (values[length.name] - length.picture.offset) / (length.picture.scale || 1)
        : Math.hypot(press.at.x - press.at.x0, press.at.y - press.at.y0);
      const radians = (drawnAngle * Math.PI) / 180;
      end = { x: press.at.x0 + drawnLength * Math.cos(radians), y: press.at.y0 - drawnLength * Math.sin(radians) };
    }
    this.overlay?.remove();
    const g = document.createElementNS(SVG_NS, "g");
    g.setAttribute("class", "drag-overlay");
    g.setAttribute("pointer-events", "none");
    const line = document.createElementNS(SVG_NS, "line");
    for (const [k, v] of [["x1", press.at.x0], ["y1", press.at.y0], ["x2", end.x], ["y2", end.y]] as const) {
      line.setAttribute(k, String(v));
    }
    line.setAttribute("stroke-width", String(4 * unit));
    const head = document.createElementNS(SVG_NS, "circle");
    head.setAttribute("cx", String(end.x));
    head.setAttribute("cy", String(end.y));
    head.setAttribute("r", String(7 * unit));
    const label = document.createElementNS(SVG_NS, "text");
    label.setAttribute("x", String(end.x + 10 * unit));
    label.setAttribute("y", String(end.y - 10 * unit));
    label.setAttribute("font-size", String(15 * unit));
    label.textContent = describeValues(move.params, values);
    g.append(line, head, label);
    svg.append(g);
    this.overlay = g;
    this.hint.textContent = `${move.label}: ${label.textContent}`;
  }
}
