;; Mask kernels of the compare engine on WebAssembly SIMD (masks-simd.ts calls them):
;;   pack — diff.ts packInk's thresholds, 32 pixels per output word;
;;   diff — diff.ts diffMasks' added/removed masks and counts, 4 words (128 pixels) per step;
;;   warp — diff.ts warpRowSegments' words;
;;   inkquads — the ink sums of 4-pixel groups behind masks-simd.ts inkLevelSimd;
;;   blockcounts — regions.ts blockCounts' changed pixels per 32 x 32 block, 4 words per test.
;; Built into masks-simd.wasm.ts by `npm run build:wasm` (scripts/build-wasm.mjs, wabt); a test checks
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
        (br $row))))

  ;; Sum of the set bits of each 32-bit lane.
  (func $pop (param $v v128) (result v128)
    (i32x4.extadd_pairwise_i16x8_u (i16x8.extadd_pairwise_i8x16_u (i8x16.popcnt (local.get $v)))))

  ;; 3x3 dilation of the 4 words at byte address $o (rows $o ± $rb): the horizontal 3-px dilation of
  ;; the OR of the three rows, as diff.ts `dilated`. $pm / $nm clear the lanes of the word before /
  ;; after that lie outside the row (the sheet's edge).
  (func $dil (param $o i32) (param $rb i32) (param $pm v128) (param $nm v128) (result v128)
    (local $u i32) (local $d i32) (local $v v128) (local $p v128) (local $n v128)
    (local.set $u (i32.sub (local.get $o) (local.get $rb)))
    (local.set $d (i32.add (local.get $o) (local.get $rb)))
    (local.set $v
      (v128.or (v128.or (v128.load (local.get $u)) (v128.load (local.get $o))) (v128.load (local.get $d))))
    (local.set $p
      (v128.and (local.get $pm)
        (v128.or
          (v128.or
            (v128.load (i32.sub (local.get $u) (i32.const 4)))
            (v128.load (i32.sub (local.get $o) (i32.const 4))))
          (v128.load (i32.sub (local.get $d) (i32.const 4))))))
    (local.set $n
      (v128.and (local.get $nm)
        (v128.or
          (v128.or (v128.load offset=4 (local.get $u)) (v128.load offset=4 (local.get $o)))
          (v128.load offset=4 (local.get $d)))))
    (v128.or
      (v128.or
        (v128.or (local.get $v) (i32x4.shl (local.get $v) (i32.const 1)))
        (v128.or (i32x4.shr_u (local.get $v) (i32.const 1)) (i32x4.shr_u (local.get $p) (i32.const 31))))
      (i32x4.shl (local.get $n) (i32.const 31))))

  ;; Bits of word k (pixels 32k..32k+31) inside [lo, hi]: diff.ts rangeBits.
  (func $range (param $k i32) (param $lo i32) (param $hi i32) (result i32)
    (local $a i32) (local $b i32)
    (local.set $a (i32.sub (local.get $lo) (i32.shl (local.get $k) (i32.const 5))))
    (if (i32.lt_s (local.get $a) (i32.const 0)) (then (local.set $a (i32.const 0))))
    (local.set $b (i32.sub (local.get $hi) (i32.shl (local.get $k) (i32.const 5))))
    (if (i32.gt_s (local.get $b) (i32.const 31)) (then (local.set $b (i32.const 31))))
    (if (i32.gt_s (local.get $a) (local.get $b)) (then (return (i32.const 0))))
    (i32.and
      (if (result i32) (i32.eq (local.get $b) (i32.const 31))
        (then (i32.const -1))
        (else (i32.sub (i32.shl (i32.const 1) (i32.add (local.get $b) (i32.const 1))) (i32.const 1))))
      (i32.xor (i32.sub (i32.shl (i32.const 1) (local.get $a)) (i32.const 1)) (i32.const -1))))

  ;; diff(n, stride, sA, wA, pA, sB, wB, pB, outAdd, outRem, lo, hi, faint, res):
  ;;   the six masks hold n + 2 rows of `stride` words from their base (row 0 and row n + 1 are the rows
  ;;   around the batch: the neighbours of its first and last rows, or those rows again at the sheet's
  ;;   edge); at least 16 readable bytes lie before each base and after each end. For the batch's rows
  ;;   r = 0..n−1 (mask row r + 1) with B's coverage [lo[r], hi[r]] (i32 arrays), writes the added and
  ;;   removed words (n rows of `stride` words, 16 bytes of slack after each) as diffMasks does, and at
  ;;   `res` the batch's counts: union, added, removed, faint added, faint removed (5 x i32).
  ;;   `faint` = 0: no faint-ink pass (pA and pB are not read).
  (func (export "diff")
    (param $n i32) (param $stride i32)
    (param $sA i32) (param $wA i32) (param $pA i32) (param $sB i32) (param $wB i32) (param $pB i32)
    (param $oAdd i32) (param $oRem i32) (param $lo i32) (param $hi i32) (param $faint i32) (param $res i32)
    (local $r i32) (local $k i32) (local $rb i32) (local $o i32) (local $q i32) (local $lov i32)
    (local $hiv i32)
    (local $wa v128) (local $wb v128) (local $sa v128) (local $sb v128) (local $valid v128)
    (local $pm v128) (local $nm v128) (local $cov v128) (local $add v128) (local $rem v128)
    (local $fa v128) (local $fr v128) (local $kv v128) (local $strideV v128)
    (local $cU v128) (local $cA v128) (local $cR v128) (local $cFA v128) (local $cFR v128)
    (local.set $rb (i32.shl (local.get $stride) (i32.const 2)))
    (local.set $strideV (i32x4.splat (local.get $stride)))
    (block $rows_done
      (loop $row
        (br_if $rows_done (i32.ge_u (local.get $r) (local.get $n)))
        (local.set $lov (i32.load (i32.add (local.get $lo) (i32.shl (local.get $r) (i32.const 2)))))
        (local.set $hiv (i32.load (i32.add (local.get $hi) (i32.shl (local.get $r) (i32.const 2)))))
        (local.set $o (i32.mul (i32.add (local.get $r) (i32.const 1)) (local.get $rb)))
        (local.set $q (i32.mul (local.get $r) (local.get $rb)))
        (local.set $k (i32.const 0))
        (block $words_done
          (loop $word
            (br_if $words_done (i32.ge_s (local.get $k) (local.get $stride)))
            (local.set $kv (i32x4.add (i32x4.splat (local.get $k)) (v128.const i32x4 0 1 2 3)))
            (local.set $valid (i32x4.lt_s (local.get $kv) (local.get $strideV)))
            (local.set $wa (v128.and (v128.load (i32.add (local.get $wA) (local.get $o))) (local.get $valid)))
            (local.set $wb (v128.and (v128.load (i32.add (local.get $wB) (local.get $o))) (local.get $valid)))
            (if (v128.any_true (v128.or (local.get $wa) (local.get $wb)))
              (then
                (local.set $sa (v128.and (v128.load (i32.add (local.get $sA) (local.get $o))) (local.get $valid)))
                (local.set $sb (v128.and (v128.load (i32.add (local.get $sB) (local.get $o))) (local.get $valid)))
                (local.set $pm
                  (if (result v128) (local.get $k)
                    (then (v128.const i32x4 -1 -1 -1 -1))
                    (else (v128.const i32x4 0 -1 -1 -1))))
                (local.set $nm
                  (i32x4.lt_s (i32x4.add (local.get $kv) (v128.const i32x4 1 1 1 1)) (local.get $strideV)))
                ;; B's coverage: whole words inside [lo, hi] are all ones.
                (local.set $cov
                  (if (result v128)
                    (i32.and
                      (i32.ge_s (i32.shl (local.get $k) (i32.const 5)) (local.get $lov))
                      (i32.le_s (i32.add (i32.shl (local.get $k) (i32.const 5)) (i32.const 127)) (local.get $hiv)))
                    (then (v128.const i32x4 -1 -1 -1 -1))
                    (else
                      (i32x4.replace_lane 3
                        (i32x4.replace_lane 2
                          (i32x4.replace_lane 1
                            (i32x4.splat (call $range (local.get $k) (local.get $lov) (local.get $hiv)))
                            (call $range (i32.add (local.get $k) (i32.const 1)) (local.get $lov) (local.get $hiv)))
                          (call $range (i32.add (local.get $k) (i32.const 2)) (local.get $lov) (local.get $hiv)))
                        (call $range (i32.add (local.get $k) (i32.const 3)) (local.get $lov) (local.get $hiv))))))
                (local.set $cU (i32x4.add (local.get $cU) (call $pop (v128.or (local.get $sa) (local.get $sb)))))
                (local.set $rem
                  (v128.and
                    (v128.andnot (local.get $sa)
                      (call $dil (i32.add (local.get $wB) (local.get $o)) (local.get $rb) (local.get $pm) (local.get $nm)))
                    (local.get $cov)))
                (local.set $add
                  (v128.andnot (local.get $sb)
                    (call $dil (i32.add (local.get $wA) (local.get $o)) (local.get $rb) (local.get $pm) (local.get $nm))))
                (local.set $cR (i32x4.add (local.get $cR) (call $pop (local.get $rem))))
                (local.set $cA (i32x4.add (local.get $cA) (call $pop (local.get $add))))
                (if (local.get $faint)
                  (then
                    (local.set $fa
                      (v128.andnot (v128.andnot (local.get $wb) (local.get $add))
                        (call $dil (i32.add (local.get $pA) (local.get $o)) (local.get $rb) (local.get $pm) (local.get $nm))))
                    (local.set $fr
                      (v128.andnot
                        (v128.and (v128.andnot (local.get $wa) (local.get $rem)) (local.get $cov))
                        (call $dil (i32.add (local.get $pB) (local.get $o)) (local.get $rb) (local.get $pm) (local.get $nm))))
                    (local.set $cFA (i32x4.add (local.get $cFA) (call $pop (local.get $fa))))
                    (local.set $cFR (i32x4.add (local.get $cFR) (call $pop (local.get $fr))))
                    (local.set $add (v128.or (local.get $add) (local.get $fa)))
                    (local.set $rem (v128.or (local.get $rem) (local.get $fr)))))
                (v128.store (i32.add (local.get $oAdd) (local.get $q)) (local.get $add))
                (v128.store (i32.add (local.get $oRem) (local.get $q)) (local.get $rem)))
              (else
                (v128.store (i32.add (local.get $oAdd) (local.get $q)) (v128.const i32x4 0 0 0 0))
                (v128.store (i32.add (local.get $oRem) (local.get $q)) (v128.const i32x4 0 0 0 0))))
            (local.set $o (i32.add (local.get $o) (i32.const 16)))
            (local.set $q (i32.add (local.get $q) (i32.const 16)))
            (local.set $k (i32.add (local.get $k) (i32.const 4)))
            (br $word)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $row)))
    (i32.store offset=0 (local.get $res) (call $hsum (local.get $cU)))
    (i32.store offset=4 (local.get $res) (call $hsum (local.get $cA)))
    (i32.store offset=8 (local.get $res) (call $hsum (local.get $cR)))
    (i32.store offset=12 (local.get $res) (call $hsum (local.get $cFA)))
    (i32.store offset=16 (local.get $res) (call $hsum (local.get $cFR))))

  (func $hsum (param $v v128) (result i32)
    (i32.add
      (i32.add (i32x4.extract_lane 0 (local.get $v)) (i32x4.extract_lane 1 (local.get $v)))
      (i32.add (i32x4.extract_lane 2 (local.get $v)) (i32x4.extract_lane 3 (local.get $v)))))

  ;; warp(n, stride, outW, segs, counts, srcP, srcW, srcS, ss, syBase, syRows, outP, outW_, outS):
  ;;   diff.ts warpRowSegments for n output rows: row r's counts[r] segments (i32 x0, x1, dx, sy each,
  ;;   16 bytes, MAX_SEGMENTS = 256 per row from segs + r·4096) map output words to funnel shifts of
  ;;   source words. The source masks hold rows syBase .. syBase + syRows − 1 (ss words each; rows
  ;;   outside that band are paper, as rows outside B). Writes all `stride` words of each row to the
  ;;   three outputs (rows one after another); a row with no segments is written as paper.
  (func (export "warp")
    (param $n i32) (param $stride i32) (param $outWidth i32) (param $segs i32) (param $counts i32)
    (param $srcP i32) (param $srcW i32) (param $srcS i32) (param $ss i32) (param $syBase i32)
    (param $syRows i32) (param $outP i32) (param $outW i32) (param $outS i32)
    (local $r i32) (local $k i32) (local $cnt i32) (local $seg i32) (local $si i32) (local $q i32)
    (local $x0 i32) (local $x1 i32) (local $p0 i32) (local $p1 i32) (local $sy i32) (local $sxs i32)
    (local $kk i32) (local $sh i32) (local $rb i32) (local $in0 i32) (local $in1 i32) (local $a0 i32)
    (local $a1 i32) (local $nb i32) (local $at i32) (local $keep i32) (local $pp i32) (local $ww i32)
    (local $sv i32) (local $pv i32) (local $wv i32) (local $svv i32) (local $w0 i32) (local $w1 i32)
    (local $s0 i32) (local $s1 i32) (local $o i32) (local $e i32)
    (block $rows_done
      (loop $row
        (br_if $rows_done (i32.ge_u (local.get $r) (local.get $n)))
        (local.set $cnt (i32.load (i32.add (local.get $counts) (i32.shl (local.get $r) (i32.const 2)))))
        (local.set $seg (i32.add (local.get $segs) (i32.shl (local.get $r) (i32.const 12))))
        (local.set $si (i32.const 0))
        (local.set $k (i32.const 0))
        (block $words_done
          (loop $word
            (br_if $words_done (i32.ge_u (local.get $k) (local.get $stride)))
            (local.set $x0 (i32.shl (local.get $k) (i32.const 5)))
            (local.set $x1 (i32.sub (i32.add (local.get $x0) (i32.const 32)) (i32.const 1)))
            (if (i32.ge_s (local.get $x1) (local.get $outWidth))
              (then (local.set $x1 (i32.sub (local.get $outWidth) (i32.const 1)))))
            (local.set $pv (i32.const 0))
            (local.set $wv (i32.const 0))
            (local.set $svv (i32.const 0))
            (if (local.get $cnt)
              (then
                ;; segments cover [0, outW) in order: skip those ending before x0
                (block $skip_done
                  (loop $skip
                    (br_if $skip_done
                      (i32.ge_s
                        (i32.load offset=4 (i32.add (local.get $seg) (i32.shl (local.get $si) (i32.const 4))))
                        (local.get $x0)))
                    (local.set $si (i32.add (local.get $si) (i32.const 1)))
                    (br $skip)))
                (local.set $q (local.get $si))
                (block $pieces_done
                  (loop $piece
                    (br_if $pieces_done (i32.ge_s (local.get $q) (local.get $cnt)))
                    (local.set $e (i32.add (local.get $seg) (i32.shl (local.get $q) (i32.const 4))))
                    (local.set $p0 (i32.load (local.get $e)))
                    (if (i32.lt_s (local.get $p0) (local.get $x0)) (then (local.set $p0 (local.get $x0))))
                    (br_if $pieces_done (i32.gt_s (local.get $p0) (local.get $x1)))
                    (local.set $p1 (i32.load offset=4 (local.get $e)))
                    (if (i32.gt_s (local.get $p1) (local.get $x1)) (then (local.set $p1 (local.get $x1))))
                    (local.set $sy (i32.sub (i32.load offset=12 (local.get $e)) (local.get $syBase)))
                    (if (i32.and
                          (i32.ge_s (local.get $sy) (i32.const 0))
                          (i32.lt_s (local.get $sy) (local.get $syRows)))
                      (then
                        (local.set $sxs (i32.add (local.get $p0) (i32.load offset=8 (local.get $e))))
                        (local.set $kk (i32.shr_s (local.get $sxs) (i32.const 5)))
                        (local.set $sh (i32.and (local.get $sxs) (i32.const 31)))
                        (local.set $rb (i32.shl (i32.add (i32.mul (local.get $sy) (local.get $ss)) (local.get $kk)) (i32.const 2)))
                        (local.set $in0
                          (i32.and (i32.ge_s (local.get $kk) (i32.const 0)) (i32.lt_s (local.get $kk) (local.get $ss))))
                        (local.set $in1
                          (i32.and
                            (i32.ge_s (local.get $kk) (i32.const -1))
                            (i32.lt_s (i32.add (local.get $kk) (i32.const 1)) (local.get $ss))))
                        (local.set $a0 (if (result i32) (local.get $in0)
                          (then (i32.load (i32.add (local.get $srcP) (local.get $rb)))) (else (i32.const 0))))
                        (local.set $a1 (if (result i32) (local.get $in1)
                          (then (i32.load offset=4 (i32.add (local.get $srcP) (local.get $rb)))) (else (i32.const 0))))
                        (if (i32.or (local.get $a0) (local.get $a1))
                          (then
                            (local.set $nb (i32.add (i32.sub (local.get $p1) (local.get $p0)) (i32.const 1)))
                            (local.set $at (i32.sub (local.get $p0) (local.get $x0)))
                            (local.set $keep
                              (if (result i32) (i32.eq (local.get $nb) (i32.const 32))
                                (then (i32.const -1))
                                (else (i32.xor (i32.shl (i32.const -1) (local.get $nb)) (i32.const -1)))))
                            (local.set $w0 (if (result i32) (local.get $in0)
                              (then (i32.load (i32.add (local.get $srcW) (local.get $rb)))) (else (i32.const 0))))
                            (local.set $s0 (if (result i32) (local.get $in0)
                              (then (i32.load (i32.add (local.get $srcS) (local.get $rb)))) (else (i32.const 0))))
                            (if (i32.eqz (local.get $sh))
                              (then
                                (local.set $pp (local.get $a0))
                                (local.set $ww (local.get $w0))
                                (local.set $sv (local.get $s0)))
                              (else
                                (local.set $w1 (if (result i32) (local.get $in1)
                                  (then (i32.load offset=4 (i32.add (local.get $srcW) (local.get $rb)))) (else (i32.const 0))))
                                (local.set $s1 (if (result i32) (local.get $in1)
                                  (then (i32.load offset=4 (i32.add (local.get $srcS) (local.get $rb)))) (else (i32.const 0))))
                                (local.set $pp (i32.or (i32.shr_u (local.get $a0) (local.get $sh))
                                  (i32.shl (local.get $a1) (i32.sub (i32.const 32) (local.get $sh)))))
                                (local.set $ww (i32.or (i32.shr_u (local.get $w0) (local.get $sh))
                                  (i32.shl (local.get $w1) (i32.sub (i32.const 32) (local.get $sh)))))
                                (local.set $sv (i32.or (i32.shr_u (local.get $s0) (local.get $sh))
                                  (i32.shl (local.get $s1) (i32.sub (i32.const 32) (local.get $sh)))))))
                            (local.set $pv (i32.or (local.get $pv) (i32.shl (i32.and (local.get $pp) (local.get $keep)) (local.get $at))))
                            (local.set $wv (i32.or (local.get $wv) (i32.shl (i32.and (local.get $ww) (local.get $keep)) (local.get $at))))
                            (local.set $svv (i32.or (local.get $svv) (i32.shl (i32.and (local.get $sv) (local.get $keep)) (local.get $at))))))))
                    (local.set $q (i32.add (local.get $q) (i32.const 1)))
                    (br $piece)))))
            (local.set $o (i32.shl (i32.add (i32.mul (local.get $r) (local.get $stride)) (local.get $k)) (i32.const 2)))
            (i32.store (i32.add (local.get $outP) (local.get $o)) (local.get $pv))
            ;; JS writes weak/strong only where pale ink is (pv ≠ 0): the same words, as weak ⊆ pale.
            (i32.store (i32.add (local.get $outW) (local.get $o)) (if (result i32) (local.get $pv) (then (local.get $wv)) (else (i32.const 0))))
            (i32.store (i32.add (local.get $outS) (local.get $o)) (if (result i32) (local.get $pv) (then (local.get $svv)) (else (i32.const 0))))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $word)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $row))))

  ;; inkquads(src, slot, rows, chunks, acc, cellRows, accStride):
  ;;   `rows` grey rows of `slot` bytes each at `src`; for each row, the ink (255 − grey) of each group
  ;;   of 4 pixels of its first 16·chunks bytes is added to one i32 at `acc` (4 groups per 16 bytes).
  ;;   Rows go to the same i32 row of `acc` `cellRows` at a time, then to the next one (`accStride`
  ;;   bytes on): one i32 row per row of level cells. The caller zeroes `acc` first.
  (func (export "inkquads")
    (param $src i32) (param $slot i32) (param $rows i32) (param $chunks i32)
    (param $acc i32) (param $cellRows i32) (param $accStride i32)
    (local $r i32) (local $c i32) (local $p i32) (local $a i32) (local $inRow i32)
    (local $paper v128)
    (local.set $paper (i8x16.splat (i32.const 255)))
    (block $rows_done
      (loop $row
        (br_if $rows_done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $p (i32.add (local.get $src) (i32.mul (local.get $r) (local.get $slot))))
        (local.set $a (local.get $acc))
        (local.set $c (i32.const 0))
        (block $chunks_done
          (loop $chunk
            (br_if $chunks_done (i32.ge_u (local.get $c) (local.get $chunks)))
            (v128.store (local.get $a)
              (i32x4.add
                (v128.load (local.get $a))
                (i32x4.extadd_pairwise_i16x8_u
                  (i16x8.extadd_pairwise_i8x16_u
                    (i8x16.sub (local.get $paper) (v128.load (local.get $p)))))))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (local.set $a (i32.add (local.get $a) (i32.const 16)))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $chunk)))
        ;; The next row of cells after cellRows rows.
        (local.set $inRow (i32.add (local.get $inRow) (i32.const 1)))
        (if (i32.eq (local.get $inRow) (local.get $cellRows))
          (then
            (local.set $inRow (i32.const 0))
            (local.set $acc (i32.add (local.get $acc) (local.get $accStride)))))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $row))))

  ;; blockcounts(a, r, rows, stride, y0, ac, rc):
  ;;   `rows` rows of `stride` words of the added mask at `a` and of the removed mask at `r` (rows one
  ;;   after another), rows y0, y0 + 1, … of the page. The set bits of word k of row y are added to
  ;;   the i32 of block (y >> 5, k) — at ac + 4·((y >> 5)·stride + k) for added, at rc likewise for
  ;;   removed. Four words of both masks are tested at a time (v128.any_true): only groups holding a
  ;;   change are counted word by word. The caller zeroes the counts first.
  (func $acc (param $p i32) (param $w i32)
    (if (local.get $w)
      (then (i32.store (local.get $p) (i32.add (i32.load (local.get $p)) (i32.popcnt (local.get $w)))))))
  (func (export "blockcounts")
    (param $a i32) (param $r i32) (param $rows i32) (param $stride i32) (param $y0 i32)
    (param $ac i32) (param $rc i32)
    (local $row i32) (local $k i32) (local $o i32) (local $b i32) (local $k4 i32) (local $j i32)
    (local $q i32)
    (local.set $k4 (i32.and (local.get $stride) (i32.const -4)))
    (block $rows_done
      (loop $rowl
        (br_if $rows_done (i32.ge_u (local.get $row) (local.get $rows)))
        ;; Byte offset of this row's block row in the counts.
        (local.set $b
          (i32.shl
            (i32.mul
              (i32.shr_u (i32.add (local.get $y0) (local.get $row)) (i32.const 5))
              (local.get $stride))
            (i32.const 2)))
        (local.set $k (i32.const 0))
        (block $vec_done
          (loop $vec
            (br_if $vec_done (i32.ge_u (local.get $k) (local.get $k4)))
            (if (v128.any_true
                  (v128.or
                    (v128.load align=4 (i32.add (local.get $a) (local.get $o)))
                    (v128.load align=4 (i32.add (local.get $r) (local.get $o)))))
              (then
                (local.set $j (i32.const 0))
                (loop $word
                  ;; $q: byte offset of word k + j in the counts' row; the word's in the masks is o + 4j.
                  (local.set $q (i32.add (local.get $b) (i32.shl (i32.add (local.get $k) (local.get $j)) (i32.const 2))))
                  (call $acc (i32.add (local.get $ac) (local.get $q))
                    (i32.load (i32.add (local.get $a) (i32.add (local.get $o) (i32.shl (local.get $j) (i32.const 2))))))
                  (call $acc (i32.add (local.get $rc) (local.get $q))
                    (i32.load (i32.add (local.get $r) (i32.add (local.get $o) (i32.shl (local.get $j) (i32.const 2))))))
                  (local.set $j (i32.add (local.get $j) (i32.const 1)))
                  (br_if $word (i32.lt_u (local.get $j) (i32.const 4))))))
            (local.set $k (i32.add (local.get $k) (i32.const 4)))
            (local.set $o (i32.add (local.get $o) (i32.const 16)))
            (br $vec)))
        ;; The row's last stride mod 4 words, one at a time.
        (block $tail_done
          (loop $tail
            (br_if $tail_done (i32.ge_u (local.get $k) (local.get $stride)))
            (local.set $q (i32.add (local.get $b) (i32.shl (local.get $k) (i32.const 2))))
            (call $acc (i32.add (local.get $ac) (local.get $q)) (i32.load (i32.add (local.get $a) (local.get $o))))
            (call $acc (i32.add (local.get $rc) (local.get $q)) (i32.load (i32.add (local.get $r) (local.get $o))))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (local.set $o (i32.add (local.get $o) (i32.const 4)))
            (br $tail)))
        (local.set $row (i32.add (local.get $row) (i32.const 1)))
        (br $rowl))))
)
