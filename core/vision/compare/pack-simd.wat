;; Ink-mask packing with WebAssembly SIMD (diff.ts packInk's thresholds, 32 pixels per output word).
;; Built into pack-simd.wasm.ts by `npm run build:wasm` (scripts/build-wasm.mjs, wabt); a test checks
;; that the committed bytes are this file's.
;;
;; pack(src, slot, rows, words, outS, outW, outP, ts, tw, tp):
;;   `rows` input rows of `slot` bytes each at `src` (grey, 32·words pixels per row; the caller pads
;;   the rest of a row with paper, 255), for each row `words` output words per mask, rows one after
;;   another: strong at outS (grey < ts), weak at outW (grey < tw), pale at outP (grey < tp).
;;   Bit i of a word is pixel 32·k + i: i8x16.lt_u marks the lanes below the threshold and
;;   i8x16.bitmask gathers lane i's sign into bit i. Words with no pale ink (paper) are written as 0
;;   without the other two compares. Needs tp ≥ tw ≥ ts (weak and strong ink are then pale ink too).
(module
  (memory (export "memory") 1)
  (func (export "pack")
    (param $src i32) (param $slot i32) (param $rows i32) (param $words i32)
    (param $outS i32) (param $outW i32) (param $outP i32)
    (param $ts i32) (param $tw i32) (param $tp i32)
    (local $r i32) (local $k i32) (local $p i32) (local $o i32) (local $pm i32)
    (local $a v128) (local $b v128) (local $vs v128) (local $vw v128) (local $vp v128)
    (local.set $vs (i8x16.splat (local.get $ts)))
    (local.set $vw (i8x16.splat (local.get $tw)))
    (local.set $vp (i8x16.splat (local.get $tp)))
    (local.set $o (i32.const 0))
    (block $rows_done
      (loop $row
        (br_if $rows_done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $p (i32.add (local.get $src) (i32.mul (local.get $r) (local.get $slot))))
        (local.set $k (i32.const 0))
        (block $words_done
          (loop $word
            (br_if $words_done (i32.ge_u (local.get $k) (local.get $words)))
            (local.set $a (v128.load (local.get $p)))
            (local.set $b (v128.load offset=16 (local.get $p)))
            (local.set $pm
              (i32.or
                (i8x16.bitmask (i8x16.lt_u (local.get $a) (local.get $vp)))
                (i32.shl (i8x16.bitmask (i8x16.lt_u (local.get $b) (local.get $vp))) (i32.const 16))))
            (i32.store (i32.add (local.get $outP) (local.get $o)) (local.get $pm))
            (if (local.get $pm)
              (then
                (i32.store (i32.add (local.get $outW) (local.get $o))
                  (i32.or
                    (i8x16.bitmask (i8x16.lt_u (local.get $a) (local.get $vw)))
                    (i32.shl (i8x16.bitmask (i8x16.lt_u (local.get $b) (local.get $vw))) (i32.const 16))))
                (i32.store (i32.add (local.get $outS) (local.get $o))
                  (i32.or
                    (i8x16.bitmask (i8x16.lt_u (local.get $a) (local.get $vs)))
                    (i32.shl (i8x16.bitmask (i8x16.lt_u (local.get $b) (local.get $vs))) (i32.const 16)))))
              (else
                (i32.store (i32.add (local.get $outW) (local.get $o)) (i32.const 0))
                (i32.store (i32.add (local.get $outS) (local.get $o)) (i32.const 0))))
            (local.set $p (i32.add (local.get $p) (i32.const 32)))
            (local.set $o (i32.add (local.get $o) (i32.const 4)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $word)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $row)))))
