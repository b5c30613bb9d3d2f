import { describe, expect, it } from 'vitest';
import { initialToolState, step, type ToolState } from './viewer-tool.machine';

const ctx = { view: { scale: 0.5, x: 10, y: 20 }, viewportWidth: 800 };

describe('viewer tool machine', () => {
  it('turns a press and release without travel into a click at the world point', () => {
    let r = step(
      initialToolState,
      { type: 'down', p: { x: 110, y: 70 }, target: 'canvas', button: 0 },
      ctx,
    );
    expect(r.state.kind).toBe('pressing');
    r = step(r.state, { type: 'move', p: { x: 112, y: 71 } }, ctx);
    expect(r.state.kind).toBe('pressing');
    r = step(r.state, { type: 'up', p: { x: 112, y: 71 } }, ctx);
    expect(r.state.kind).toBe('idle');
    expect(r.effects).toEqual([{ type: 'click', world: { x: 204, y: 102 } }]);
  });

  it('pans by pointer deltas once past the slop and never clicks', () => {
    let view = ctx.view;
    let state: ToolState = step(
      initialToolState,
      { type: 'down', p: { x: 0, y: 0 }, target: 'canvas', button: 0 },
      ctx,
    ).state;
    const apply = (r: ReturnType<typeof step>) => {
      for (const e of r.effects) if (e.type === 'view') view = e.view;
      state = r.state;
      return r;
    };
    apply(step(state, { type: 'move', p: { x: 30, y: 0 } }, { ...ctx, view }));
    expect(state.kind).toBe('panning');
    apply(step(state, { type: 'move', p: { x: 50, y: -10 } }, { ...ctx, view }));
    const up = apply(step(state, { type: 'up', p: { x: 50, y: -10 } }, { ...ctx, view }));
    expect(view).toEqual({ scale: 0.5, x: 60, y: 10 });
    expect(up.effects.some((e) => e.type === 'click')).toBe(false);
    expect(state.kind).toBe('idle');
  });

  it('drags the swipe divider as a clamped fraction of the width', () => {
    let r = step(
      initialToolState,
      { type: 'down', p: { x: 400, y: 5 }, target: 'swipe-handle', button: 0 },
      ctx,
    );
    expect(r.state.kind).toBe('swiping');
    r = step(r.state, { type: 'move', p: { x: 200, y: 5 } }, ctx);
    expect(r.effects).toEqual([{ type: 'swipe', fraction: 0.25 }]);
    r = step(r.state, { type: 'move', p: { x: 9000, y: 5 } }, ctx);
    expect(r.effects).toEqual([{ type: 'swipe', fraction: 1 }]);
    expect(step(r.state, { type: 'up', p: { x: 0, y: 0 } }, ctx).state.kind).toBe('idle');
  });

  it('ignores the right button', () => {
    const r = step(
      initialToolState,
      { type: 'down', p: { x: 1, y: 1 }, target: 'canvas', button: 2 },
      ctx,
    );
    expect(r.state.kind).toBe('idle');
  });
});
