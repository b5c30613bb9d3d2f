// The viewer's pointer tool as a small state machine (tldraw/excalidraw style): a pure
// `step(state, event, ctx)` returns the next state and what to do. The component only turns
// DOM events into these events and applies the effects.
//
//   idle ──down(canvas)──▶ pressing ──move > slop──▶ panning ──up──▶ idle
//     │                       └──up──▶ idle + click(world point)
//     └──down(swipe handle)──▶ swiping ──up──▶ idle
//
// Points are screen (CSS) pixels relative to the canvas.

import type { Point, View } from './view-transform';
import { panBy, screenToWorld } from './view-transform';

export type ToolState =
  | { kind: 'idle' }
  | { kind: 'pressing'; start: Point; startView: View }
  | { kind: 'panning'; last: Point }
  | { kind: 'swiping' };

export type ToolEvent =
  | { type: 'down'; p: Point; target: 'canvas' | 'swipe-handle'; button: number }
  | { type: 'move'; p: Point }
  | { type: 'up'; p: Point }
  | { type: 'cancel' };

export interface ToolContext {
  view: View;
  /** Swipe divider position as a fraction of the viewport width. */
  viewportWidth: number;
}

export type ToolEffect =
  | { type: 'view'; view: View }
  | { type: 'swipe'; fraction: number }
  | { type: 'click'; world: Point }
  | { type: 'cursor'; cursor: 'default' | 'grabbing' | 'ew-resize' };

export interface StepResult {
  state: ToolState;
  effects: ToolEffect[];
}

/** Pointer travel (screen px) below which a press counts as a click, not a pan. */
export const CLICK_SLOP = 4;

export const initialToolState: ToolState = { kind: 'idle' };

export function step(state: ToolState, ev: ToolEvent, ctx: ToolContext): StepResult {
  switch (state.kind) {
    case 'idle':
      if (ev.type === 'down') {
        if (ev.target === 'swipe-handle' && ev.button === 0) {
          return { state: { kind: 'swiping' }, effects: [{ type: 'cursor', cursor: 'ew-resize' }] };
        }
        // Left or middle button pans; right button is left to the context menu.
        if (ev.button === 0 || ev.button === 1) {
          return { state: { kind: 'pressing', start: ev.p, startView: ctx.view }, effects: [] };
        }
      }
      return { state, effects: [] };

    case 'pressing':
      if (ev.type === 'move') {
        const dx = ev.p.x - state.start.x;
        const dy = ev.p.y - state.start.y;
        if (Math.hypot(dx, dy) <= CLICK_SLOP) return { state, effects: [] };
        return {
          state: { kind: 'panning', last: ev.p },
          effects: [
            { type: 'cursor', cursor: 'grabbing' },
            { type: 'view', view: panBy(ctx.view, dx, dy) },
          ],
        };
      }
      if (ev.type === 'up') {
        return {
          state: { kind: 'idle' },
          effects: [{ type: 'click', world: screenToWorld(ctx.view, ev.p) }],
        };
      }
      if (ev.type === 'cancel') return { state: { kind: 'idle' }, effects: [] };
      return { state, effects: [] };

    case 'panning':
      if (ev.type === 'move') {
        return {
          state: { kind: 'panning', last: ev.p },
          effects: [
            { type: 'view', view: panBy(ctx.view, ev.p.x - state.last.x, ev.p.y - state.last.y) },
          ],
        };
      }
      if (ev.type === 'up' || ev.type === 'cancel') {
        return { state: { kind: 'idle' }, effects: [{ type: 'cursor', cursor: 'default' }] };
      }
      return { state, effects: [] };

    case 'swiping':
      if (ev.type === 'move') {
        const fraction = Math.min(1, Math.max(0, ev.p.x / Math.max(1, ctx.viewportWidth)));
        return { state, effects: [{ type: 'swipe', fraction }] };
      }
      if (ev.type === 'up' || ev.type === 'cancel') {
        return { state: { kind: 'idle' }, effects: [{ type: 'cursor', cursor: 'default' }] };
      }
      return { state, effects: [] };
  }
}
