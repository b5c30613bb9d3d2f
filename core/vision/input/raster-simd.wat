;; Pixel kernels of the ingest raster on WebAssembly SIMD (raster-simd.ts calls them):
;;   grey_rows — pdfium.adapter.ts greyFromRgb's grey and coloured count, 16 pixels per step;
;;   resample_rgb_rows — grey-resample.ts resampleRgb's enlarging case (two taps both ways);
;;   pack_rows — pdfium.adapter.ts packColourLineRows (a colour pass's pixels under a grey threshold,
;;     1 bit a pixel), 16 pixels a step.
;; The module imports its memory: raster-simd.ts instantiates it on a PDFium instance's own
;; WebAssembly.Memory, so the kernels read PDFium's bitmap where it lies (no copy out and back).
;; Built into raster-simd.wasm.ts by `npm run build:wasm` (scripts/build-wasm.mjs, wabt); a test checks
;; that the committed bytes are this file's.
;;
;; grey_rows(src, stride, width, rows, dst) -> coloured:
;;   `rows` rows of R G B pixels (3 B/px, `width` pixels) at `src`, `stride` bytes apart; for each
;;   pixel its grey (30 R + 59 G + 11 B) / 100, floored, into `dst` (`width` bytes a row, rows packed).
;;   Returns how many pixels are coloured: max(R, G, B) − min(R, G, B) > 24 (COLOUR_CHROMA).
;;   Sixteen pixels are three loads, deinterleaved into R, G and B vectors by two shuffles each;
;;   all-white steps (blank paper) store 255s at once. The sum (at most 25500) fits u16 lanes; the
;;   division is x · 5243 >> 19 (exact up to 25500) in u32 lanes.
;;
;; resample_rgb_rows(src, rowBytes, rows, params, tab, line, out, outStride):
;;   target rows of an RGB image enlarged with two taps each way (resampleRgb when both axes enlarge).
;;   `params` holds 8 i32 per target row: first source row, its weight w0, the next row's weight w1,
;;   target pixels [x0, x1) to compute, source bytes [c0, c1) they read, and the row's offset from
;;   `out` (rows outside the image's ink are white: the caller fills them, x1 ≤ x0 computes none).
;;   Vertical: line[c] = (s0[c] · w0 + s1[c] · w1 + 32) >> 6 as u16 (at most 65280) for c in
;;   [c0, c1) 16 bytes per step (the caller pads the source by 16 bytes and `line` by 64).
;;   Horizontal: `tab` has 3 i32 per target pixel (first tap in bytes, w0, w1); each target pixel's
;;   three channels are (line[st + c] · w0 + line[st + 3 + c] · w1 + 2^21) >> 22 in i32 lanes, stored
;;   as four bytes (the fourth is the next pixel's, rewritten next), the row's last pixel as three.
(module
  (import "env" "memory" (memory 0))

  (func $grey1 (param $p i32) (result i32)
    (i32.shr_u
      (i32.mul
        (i32.add
          (i32.add
            (i32.mul (i32.load8_u (local.get $p)) (i32.const 30))
            (i32.mul (i32.load8_u offset=1 (local.get $p)) (i32.const 59)))
          (i32.mul (i32.load8_u offset=2 (local.get $p)) (i32.const 11)))
        (i32.const 5243))
      (i32.const 19)))

  ;; 1 when the pixel at p spreads by more than 24, else 0.
  (func $chroma1 (param $p i32) (result i32)
    (local $r i32) (local $g i32) (local $b i32) (local $hi i32) (local $lo i32)
    (local.set $r (i32.load8_u (local.get $p)))
    (local.set $g (i32.load8_u offset=1 (local.get $p)))
    (local.set $b (i32.load8_u offset=2 (local.get $p)))
    (local.set $hi (select (local.get $r) (local.get $g) (i32.gt_u (local.get $r) (local.get $g))))
    (local.set $hi (select (local.get $hi) (local.get $b) (i32.gt_u (local.get $hi) (local.get $b))))
    (local.set $lo (select (local.get $r) (local.get $g) (i32.lt_u (local.get $r) (local.get $g))))
    (local.set $lo (select (local.get $lo) (local.get $b) (i32.lt_u (local.get $lo) (local.get $b))))
    (i32.gt_u (i32.sub (local.get $hi) (local.get $lo)) (i32.const 24)))

  ;; Grey of 8 pixels from their u16 R, G, B lanes.
  (func $grey8 (param $r v128) (param $g v128) (param $b v128) (result v128)
    (local $s v128) (local $k v128)
    (local.set $k (i16x8.splat (i32.const 5243)))
    (local.set $s
      (i16x8.add
        (i16x8.add
          (i16x8.mul (local.get $r) (i16x8.splat (i32.const 30)))
          (i16x8.mul (local.get $g) (i16x8.splat (i32.const 59))))
        (i16x8.mul (local.get $b) (i16x8.splat (i32.const 11)))))
    (i16x8.narrow_i32x4_u
      (i32x4.shr_u (i32x4.extmul_low_i16x8_u (local.get $s) (local.get $k)) (i32.const 19))
      (i32x4.shr_u (i32x4.extmul_high_i16x8_u (local.get $s) (local.get $k)) (i32.const 19))))

  (func (export "grey_rows")
    (param $src i32) (param $stride i32) (param $width i32) (param $rows i32) (param $dst i32)
    (result i32)
    (local $y i32) (local $x i32) (local $p i32) (local $q i32) (local $coloured i32)
    (local $a v128) (local $b v128) (local $c v128)
    (local $r v128) (local $g v128) (local $bl v128) (local $hi v128) (local $lo v128)
    (local $ones v128) (local $limit v128)
    (local.set $ones (i8x16.splat (i32.const 255)))
    (local.set $limit (i8x16.splat (i32.const 24)))
    (local.set $q (local.get $dst))
    (block $rows_done
      (loop $row
        (br_if $rows_done (i32.ge_u (local.get $y) (local.get $rows)))
        (local.set $p (i32.add (local.get $src) (i32.mul (local.get $y) (local.get $stride))))
        (local.set $x (i32.const 0))
        (block $vec_done
          (loop $vec
            (br_if $vec_done (i32.gt_u (i32.add (local.get $x) (i32.const 16)) (local.get $width)))
            (local.set $a (v128.load (local.get $p)))
            (local.set $b (v128.load offset=16 (local.get $p)))
            (local.set $c (v128.load offset=32 (local.get $p)))
            (if (v128.any_true (v128.not (v128.and (v128.and (local.get $a) (local.get $b)) (local.get $c))))
              (then
                (local.set $r
                  (i8x16.shuffle 0 1 2 3 4 5 6 7 8 9 10 17 20 23 26 29
                    (i8x16.shuffle 0 3 6 9 12 15 18 21 24 27 30 0 0 0 0 0 (local.get $a) (local.get $b))
                    (local.get $c)))
                (local.set $g
                  (i8x16.shuffle 0 1 2 3 4 5 6 7 8 9 10 18 21 24 27 30
                    (i8x16.shuffle 1 4 7 10 13 16 19 22 25 28 31 0 0 0 0 0 (local.get $a) (local.get $b))
                    (local.get $c)))
                (local.set $bl
                  (i8x16.shuffle 0 1 2 3 4 5 6 7 8 9 16 19 22 25 28 31
                    (i8x16.shuffle 2 5 8 11 14 17 20 23 26 29 0 0 0 0 0 0 (local.get $a) (local.get $b))
                    (local.get $c)))
                (local.set $hi (i8x16.max_u (i8x16.max_u (local.get $r) (local.get $g)) (local.get $bl)))
                (local.set $lo (i8x16.min_u (i8x16.min_u (local.get $r) (local.get $g)) (local.get $bl)))
                (local.set $coloured
                  (i32.add (local.get $coloured)
                    (i32.popcnt
                      (i8x16.bitmask
                        (i8x16.gt_u (i8x16.sub (local.get $hi) (local.get $lo)) (local.get $limit))))))
                (v128.store (local.get $q)
                  (i8x16.narrow_i16x8_u
                    (call $grey8
                      (i16x8.extend_low_i8x16_u (local.get $r))
                      (i16x8.extend_low_i8x16_u (local.get $g))
                      (i16x8.extend_low_i8x16_u (local.get $bl)))
                    (call $grey8
                      (i16x8.extend_high_i8x16_u (local.get $r))
                      (i16x8.extend_high_i8x16_u (local.get $g))
                      (i16x8.extend_high_i8x16_u (local.get $bl))))))
              (else (v128.store (local.get $q) (local.get $ones))))
            (local.set $p (i32.add (local.get $p) (i32.const 48)))
            (local.set $q (i32.add (local.get $q) (i32.const 16)))
            (local.set $x (i32.add (local.get $x) (i32.const 16)))
            (br $vec)))
        (block $tail_done
          (loop $tail
            (br_if $tail_done (i32.ge_u (local.get $x) (local.get $width)))
            (i32.store8 (local.get $q) (call $grey1 (local.get $p)))
            (local.set $coloured (i32.add (local.get $coloured) (call $chroma1 (local.get $p))))
            (local.set $p (i32.add (local.get $p) (i32.const 3)))
            (local.set $q (i32.add (local.get $q) (i32.const 1)))
            (local.set $x (i32.add (local.get $x) (i32.const 1)))
            (br $tail)))
        (local.set $y (i32.add (local.get $y) (i32.const 1)))
        (br $row)))
    (local.get $coloured))

  (func (export "resample_rgb_rows")
    (param $src i32) (param $rowBytes i32) (param $rows i32) (param $params i32) (param $tab i32)
    (param $line i32) (param $out i32) (param $outStride i32)
    (local $y i32) (local $pp i32) (local $s0 i32) (local $s1 i32) (local $c i32) (local $c1 i32)
    (local $x i32) (local $x1 i32) (local $t i32) (local $o i32) (local $st i32) (local $v i32)
    (local $w0 v128) (local $w1 v128) (local $a v128) (local $b v128) (local $acc v128)
    (local $half v128) (local $thirtytwo v128)
    (local.set $half (i32x4.splat (i32.const 2097152)))
    (local.set $thirtytwo (i32x4.splat (i32.const 32)))
    (block $rows_done
      (loop $row
        (br_if $rows_done (i32.ge_u (local.get $y) (local.get $rows)))
        (local.set $pp (i32.add (local.get $params) (i32.shl (local.get $y) (i32.const 5))))
        (local.set $x (i32.load offset=12 (local.get $pp)))
        (local.set $x1 (i32.load offset=16 (local.get $pp)))
        (if (i32.lt_s (local.get $x) (local.get $x1))
          (then
            ;; Vertical: source rows first and first + 1 into line[c0, c1), 16 bytes a step.
            (local.set $s0
              (i32.add (local.get $src) (i32.mul (i32.load (local.get $pp)) (local.get $rowBytes))))
            (local.set $s1 (i32.add (local.get $s0) (local.get $rowBytes)))
            (local.set $w0 (i16x8.splat (i32.load offset=4 (local.get $pp))))
            (local.set $w1 (i16x8.splat (i32.load offset=8 (local.get $pp))))
            (local.set $c (i32.load offset=20 (local.get $pp)))
            (local.set $c1 (i32.load offset=24 (local.get $pp)))
            (block $v_done
              (loop $vert
                (br_if $v_done (i32.ge_s (local.get $c) (local.get $c1)))
                (local.set $a (v128.load (i32.add (local.get $s0) (local.get $c))))
                (local.set $b (v128.load (i32.add (local.get $s1) (local.get $c))))
                (local.set $v (i32.add (local.get $line) (i32.shl (local.get $c) (i32.const 1))))
                (v128.store (local.get $v)
                  (i16x8.narrow_i32x4_u
                    (i32x4.shr_u
                      (i32x4.add
                        (i32x4.add
                          (i32x4.extmul_low_i16x8_u (i16x8.extend_low_i8x16_u (local.get $a)) (local.get $w0))
                          (i32x4.extmul_low_i16x8_u (i16x8.extend_low_i8x16_u (local.get $b)) (local.get $w1)))
                        (local.get $thirtytwo))
                      (i32.const 6))
                    (i32x4.shr_u
                      (i32x4.add
                        (i32x4.add
                          (i32x4.extmul_high_i16x8_u (i16x8.extend_low_i8x16_u (local.get $a)) (local.get $w0))
                          (i32x4.extmul_high_i16x8_u (i16x8.extend_low_i8x16_u (local.get $b)) (local.get $w1)))
                        (local.get $thirtytwo))
                      (i32.const 6))))
                (v128.store offset=16 (local.get $v)
                  (i16x8.narrow_i32x4_u
                    (i32x4.shr_u
                      (i32x4.add
                        (i32x4.add
                          (i32x4.extmul_low_i16x8_u (i16x8.extend_high_i8x16_u (local.get $a)) (local.get $w0))
                          (i32x4.extmul_low_i16x8_u (i16x8.extend_high_i8x16_u (local.get $b)) (local.get $w1)))
                        (local.get $thirtytwo))
                      (i32.const 6))
                    (i32x4.shr_u
                      (i32x4.add
                        (i32x4.add
                          (i32x4.extmul_high_i16x8_u (i16x8.extend_high_i8x16_u (local.get $a)) (local.get $w0))
                          (i32x4.extmul_high_i16x8_u (i16x8.extend_high_i8x16_u (local.get $b)) (local.get $w1)))
                        (local.get $thirtytwo))
                      (i32.const 6))))
                (local.set $c (i32.add (local.get $c) (i32.const 16)))
                (br $vert)))
            ;; The right edge's second tap (weight 0): line[rowBytes + k] = line[rowBytes - 3 + k].
            (local.set $v (i32.add (local.get $line) (i32.shl (local.get $rowBytes) (i32.const 1))))
            (i32.store16 (local.get $v) (i32.load16_u offset=0 (i32.sub (local.get $v) (i32.const 6))))
            (i32.store16 offset=2 (local.get $v) (i32.load16_u (i32.sub (local.get $v) (i32.const 4))))
            (i32.store16 offset=4 (local.get $v) (i32.load16_u (i32.sub (local.get $v) (i32.const 2))))
            ;; Horizontal: target pixels [x0, x1) of the row, three channels each.
            (local.set $o
              (i32.add (i32.add (local.get $out) (i32.load offset=28 (local.get $pp)))
                (i32.mul (local.get $x) (i32.const 3))))
            (local.set $t (i32.add (local.get $tab) (i32.mul (local.get $x) (i32.const 12))))
            (block $h_done
              (loop $horiz
                (br_if $h_done (i32.ge_s (local.get $x) (local.get $x1)))
                (local.set $st
                  (i32.add (local.get $line) (i32.shl (i32.load (local.get $t)) (i32.const 1))))
                (local.set $acc
                  (i32x4.shr_u
                    (i32x4.add
                      (i32x4.add
                        (i32x4.mul
                          (i32x4.extend_low_i16x8_u (v128.load64_zero (local.get $st)))
                          (i32x4.splat (i32.load offset=4 (local.get $t))))
                        (i32x4.mul
                          (i32x4.extend_low_i16x8_u (v128.load64_zero offset=6 (local.get $st)))
                          (i32x4.splat (i32.load offset=8 (local.get $t)))))
                      (local.get $half))
                    (i32.const 22)))
                (local.set $acc
                  (i8x16.narrow_i16x8_u
                    (i16x8.narrow_i32x4_u (local.get $acc) (local.get $acc))
                    (local.get $acc)))
                (if (i32.lt_s (i32.add (local.get $x) (i32.const 1)) (local.get $x1))
                  (then (v128.store32_lane 0 (local.get $o) (local.get $acc)))
                  (else
                    (v128.store16_lane 0 (local.get $o) (local.get $acc))
                    (v128.store8_lane offset=2 2 (local.get $o) (local.get $acc))))
                (local.set $o (i32.add (local.get $o) (i32.const 3)))
                (local.set $t (i32.add (local.get $t) (i32.const 12)))
                (local.set $x (i32.add (local.get $x) (i32.const 1)))
                (br $horiz)))))
        (local.set $y (i32.add (local.get $y) (i32.const 1)))
        (br $row))))

  ;; pack_rows(src, stride, width, rows, dst, dstStride, w0, w2, limit):
  ;;   pdfium.adapter.ts packColourLineRows: for `rows` rows of a 3 B/px bitmap at `src` (`stride`
  ;;   bytes apart), bit 7 − (x mod 8) of byte x >> 3 of output row y (at dst + y · dstStride) set
  ;;   where w0 · c0 + 59 · c1 + w2 · c2 < limit (c0 c1 c2 the pixel's bytes in memory order; every
  ;;   weight ≤ 59 and their sum 100, so the sum fits u16 lanes). Writes every byte of the row's
  ;;   ceil(width / 8), nothing else. Sixteen pixels a step (deinterleaved as in grey_rows) are two
  ;;   bytes: all paper (every byte 255) is two zero bytes without arithmetic, which is right only
  ;;   when 25500 ≥ limit (the caller's condition).
  (func $sum1 (param $p i32) (param $w0 i32) (param $w2 i32) (result i32)
    (i32.add
      (i32.add
        (i32.mul (i32.load8_u (local.get $p)) (local.get $w0))
        (i32.mul (i32.load8_u offset=1 (local.get $p)) (i32.const 59)))
      (i32.mul (i32.load8_u offset=2 (local.get $p)) (local.get $w2))))

  ;; 0xFFFF lanes where w0 c0 + 59 c1 + w2 c2 < limit, from u16 lanes of the three bytes.
  (func $below8 (param $c0 v128) (param $c1 v128) (param $c2 v128)
    (param $w0 v128) (param $w2 v128) (param $limit v128) (result v128)
    (i16x8.lt_u
      (i16x8.add
        (i16x8.add
          (i16x8.mul (local.get $c0) (local.get $w0))
          (i16x8.mul (local.get $c1) (i16x8.splat (i32.const 59))))
        (i16x8.mul (local.get $c2) (local.get $w2)))
      (local.get $limit)))

  (func (export "pack_rows")
    (param $src i32) (param $stride i32) (param $width i32) (param $rows i32) (param $dst i32)
    (param $dstStride i32) (param $w0 i32) (param $w2 i32) (param $limit i32)
    (local $y i32) (local $x i32) (local $p i32) (local $q i32) (local $v i32)
    (local $a v128) (local $b v128) (local $c v128)
    (local $r v128) (local $g v128) (local $bl v128)
    (local $vw0 v128) (local $vw2 v128) (local $vlimit v128) (local $m v128)
    (local.set $vw0 (i16x8.splat (local.get $w0)))
    (local.set $vw2 (i16x8.splat (local.get $w2)))
    (local.set $vlimit (i16x8.splat (local.get $limit)))
    (block $rows_done
      (loop $row
        (br_if $rows_done (i32.ge_u (local.get $y) (local.get $rows)))
        (local.set $p (i32.add (local.get $src) (i32.mul (local.get $y) (local.get $stride))))
        (local.set $q (i32.add (local.get $dst) (i32.mul (local.get $y) (local.get $dstStride))))
        (local.set $x (i32.const 0))
        (block $vec_done
          (loop $vec
            (br_if $vec_done (i32.gt_u (i32.add (local.get $x) (i32.const 16)) (local.get $width)))
            (local.set $a (v128.load (local.get $p)))
            (local.set $b (v128.load offset=16 (local.get $p)))
            (local.set $c (v128.load offset=32 (local.get $p)))
            (if (v128.any_true (v128.not (v128.and (v128.and (local.get $a) (local.get $b)) (local.get $c))))
              (then
                (local.set $r
                  (i8x16.shuffle 0 1 2 3 4 5 6 7 8 9 10 17 20 23 26 29
                    (i8x16.shuffle 0 3 6 9 12 15 18 21 24 27 30 0 0 0 0 0 (local.get $a) (local.get $b))
                    (local.get $c)))
                (local.set $g
                  (i8x16.shuffle 0 1 2 3 4 5 6 7 8 9 10 18 21 24 27 30
                    (i8x16.shuffle 1 4 7 10 13 16 19 22 25 28 31 0 0 0 0 0 (local.get $a) (local.get $b))
                    (local.get $c)))
                (local.set $bl
                  (i8x16.shuffle 0 1 2 3 4 5 6 7 8 9 16 19 22 25 28 31
                    (i8x16.shuffle 2 5 8 11 14 17 20 23 26 29 0 0 0 0 0 0 (local.get $a) (local.get $b))
                    (local.get $c)))
                ;; Lane i is pixel i; reversed within each half, bitmask bit 7 is pixel 0 and bit 15
                ;; pixel 8: the two output bytes in memory order.
                (local.set $m
                  (i8x16.narrow_i16x8_s
                    (call $below8
                      (i16x8.extend_low_i8x16_u (local.get $r))
                      (i16x8.extend_low_i8x16_u (local.get $g))
                      (i16x8.extend_low_i8x16_u (local.get $bl))
                      (local.get $vw0) (local.get $vw2) (local.get $vlimit))
                    (call $below8
                      (i16x8.extend_high_i8x16_u (local.get $r))
                      (i16x8.extend_high_i8x16_u (local.get $g))
                      (i16x8.extend_high_i8x16_u (local.get $bl))
                      (local.get $vw0) (local.get $vw2) (local.get $vlimit))))
                (i32.store16 (local.get $q)
                  (i8x16.bitmask
                    (i8x16.shuffle 7 6 5 4 3 2 1 0 15 14 13 12 11 10 9 8
                      (local.get $m) (local.get $m)))))
              (else (i32.store16 (local.get $q) (i32.const 0))))
            (local.set $p (i32.add (local.get $p) (i32.const 48)))
            (local.set $q (i32.add (local.get $q) (i32.const 2)))
            (local.set $x (i32.add (local.get $x) (i32.const 16)))
            (br $vec)))
        ;; The last width mod 16 pixels one at a time, a byte stored at each eighth and at the end.
        (local.set $v (i32.const 0))
        (block $tail_done
          (loop $tail
            (br_if $tail_done (i32.ge_u (local.get $x) (local.get $width)))
            (if (i32.lt_u (call $sum1 (local.get $p) (local.get $w0) (local.get $w2)) (local.get $limit))
              (then
                (local.set $v
                  (i32.or (local.get $v)
                    (i32.shr_u (i32.const 0x80) (i32.and (local.get $x) (i32.const 7)))))))
            (local.set $p (i32.add (local.get $p) (i32.const 3)))
            (local.set $x (i32.add (local.get $x) (i32.const 1)))
            (if (i32.or
                  (i32.eqz (i32.and (local.get $x) (i32.const 7)))
                  (i32.ge_u (local.get $x) (local.get $width)))
              (then
                (i32.store8 (local.get $q) (local.get $v))
                (local.set $q (i32.add (local.get $q) (i32.const 1)))
                (local.set $v (i32.const 0))))
            (br $tail)))
        (local.set $y (i32.add (local.get $y) (i32.const 1)))
        (br $row))))
)
