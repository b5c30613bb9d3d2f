;; fft.ts's 2-D FFT in WebAssembly (fft.ts calls it): the same radix-2 butterflies in the same order on
;; the same twiddles, so the results are bit-identical to the JS loops (no fused multiply-add in
;; either).
;; Built into fft.wasm.ts by `npm run build:wasm` (scripts/build-wasm.mjs, wabt); a test checks that
;; the committed bytes are this file's.
(module
  (memory (export "memory") 1)

  ;; In-place FFT of n complex values at element indices off + i·stride (f64 arrays at `re` and `im`),
  ;; as fft.ts fft1d: bit-reversal permutation (`rev`: n u32), a multiplication-free size-2 stage, then
  ;; stages of size 4..n with twiddles cos[k·step], sgn·sin[k·step] (`cos`, `sin`: n/2 f64 each).
  (func $fft1d (param $re i32) (param $im i32) (param $off i32) (param $n i32) (param $stride i32)
    (param $cos i32) (param $sin i32) (param $rev i32) (param $sgn f64)
    (local $i i32) (local $j i32) (local $pa i32) (local $pb i32) (local $t f64)
    (local $size i32) (local $half i32) (local $step i32) (local $k i32) (local $a i32)
    (local $wr f64) (local $wi f64) (local $br f64) (local $bi f64) (local $xr f64) (local $xi f64)
    (local $ar f64) (local $ai f64) (local $s8 i32) (local $h8 i32) (local $end i32)
    ;; byte stride of one element
    (local.set $s8 (i32.shl (local.get $stride) (i32.const 3)))
    ;; bit reversal
    (block $rev_done
      (loop $revl
        (br_if $rev_done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $j (i32.load (i32.add (local.get $rev) (i32.shl (local.get $i) (i32.const 2)))))
        (if (i32.gt_u (local.get $j) (local.get $i))
          (then
            (local.set $pa (i32.shl (i32.add (local.get $off) (i32.mul (local.get $i) (local.get $stride))) (i32.const 3)))
            (local.set $pb (i32.shl (i32.add (local.get $off) (i32.mul (local.get $j) (local.get $stride))) (i32.const 3)))
            (local.set $t (f64.load (i32.add (local.get $re) (local.get $pa))))
            (f64.store (i32.add (local.get $re) (local.get $pa)) (f64.load (i32.add (local.get $re) (local.get $pb))))
            (f64.store (i32.add (local.get $re) (local.get $pb)) (local.get $t))
            (local.set $t (f64.load (i32.add (local.get $im) (local.get $pa))))
            (f64.store (i32.add (local.get $im) (local.get $pa)) (f64.load (i32.add (local.get $im) (local.get $pb))))
            (f64.store (i32.add (local.get $im) (local.get $pb)) (local.get $t))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $revl)))
    ;; size-2 stage
    (local.set $pa (i32.shl (local.get $off) (i32.const 3)))
    (local.set $end (i32.shl (i32.add (local.get $off) (i32.mul (local.get $n) (local.get $stride))) (i32.const 3)))
    (block $s2_done
      (loop $s2
        (br_if $s2_done (i32.ge_u (local.get $pa) (local.get $end)))
        (local.set $pb (i32.add (local.get $pa) (local.get $s8)))
        (local.set $xr (f64.load (i32.add (local.get $re) (local.get $pb))))
        (local.set $xi (f64.load (i32.add (local.get $im) (local.get $pb))))
        (local.set $ar (f64.load (i32.add (local.get $re) (local.get $pa))))
        (local.set $ai (f64.load (i32.add (local.get $im) (local.get $pa))))
        (f64.store (i32.add (local.get $re) (local.get $pb)) (f64.sub (local.get $ar) (local.get $xr)))
        (f64.store (i32.add (local.get $im) (local.get $pb)) (f64.sub (local.get $ai) (local.get $xi)))
        (f64.store (i32.add (local.get $re) (local.get $pa)) (f64.add (local.get $ar) (local.get $xr)))
        (f64.store (i32.add (local.get $im) (local.get $pa)) (f64.add (local.get $ai) (local.get $xi)))
        (local.set $pa (i32.add (local.get $pa) (i32.shl (local.get $s8) (i32.const 1))))
        (br $s2)))
    ;; stages of size 4..n
    (local.set $size (i32.const 4))
    (block $stages_done
      (loop $stage
        (br_if $stages_done (i32.gt_u (local.get $size) (local.get $n)))
        (local.set $half (i32.shr_u (local.get $size) (i32.const 1)))
        (local.set $step (i32.div_u (local.get $n) (local.get $size)))
        (local.set $h8 (i32.mul (local.get $half) (local.get $s8)))
        (local.set $k (i32.const 0))
        (block $ks_done
          (loop $kl
            (br_if $ks_done (i32.ge_u (local.get $k) (local.get $half)))
            (local.set $wr (f64.load (i32.add (local.get $cos) (i32.shl (i32.mul (local.get $k) (local.get $step)) (i32.const 3)))))
            (local.set $wi
              (f64.mul (local.get $sgn)
                (f64.load (i32.add (local.get $sin) (i32.shl (i32.mul (local.get $k) (local.get $step)) (i32.const 3))))))
            (local.set $pa (i32.shl (i32.add (local.get $off) (i32.mul (local.get $k) (local.get $stride))) (i32.const 3)))
            (block $as_done
              (loop $al
                (br_if $as_done (i32.ge_u (local.get $pa) (local.get $end)))
                (local.set $pb (i32.add (local.get $pa) (local.get $h8)))
                (local.set $br (f64.load (i32.add (local.get $re) (local.get $pb))))
                (local.set $bi (f64.load (i32.add (local.get $im) (local.get $pb))))
                (local.set $xr (f64.sub (f64.mul (local.get $br) (local.get $wr)) (f64.mul (local.get $bi) (local.get $wi))))
                (local.set $xi (f64.add (f64.mul (local.get $br) (local.get $wi)) (f64.mul (local.get $bi) (local.get $wr))))
                (local.set $ar (f64.load (i32.add (local.get $re) (local.get $pa))))
                (local.set $ai (f64.load (i32.add (local.get $im) (local.get $pa))))
                (f64.store (i32.add (local.get $re) (local.get $pb)) (f64.sub (local.get $ar) (local.get $xr)))
                (f64.store (i32.add (local.get $im) (local.get $pb)) (f64.sub (local.get $ai) (local.get $xi)))
                (f64.store (i32.add (local.get $re) (local.get $pa)) (f64.add (local.get $ar) (local.get $xr)))
                (f64.store (i32.add (local.get $im) (local.get $pa)) (f64.add (local.get $ai) (local.get $xi)))
                (local.set $pa (i32.add (local.get $pa) (i32.mul (local.get $size) (local.get $s8))))
                (br $al)))
            (local.set $k (i32.add (local.get $k) (i32.const 1)))
            (br $kl)))
        (local.set $size (i32.shl (local.get $size) (i32.const 1)))
        (br $stage))))

  ;; Copy of a rows x cols f64 grid at `src` into its transpose (cols x rows) at `dst`.
  (func $transpose (param $src i32) (param $dst i32) (param $rows i32) (param $cols i32)
    (local $r i32) (local $c i32) (local $p i32)
    (block $rows_done
      (loop $rl
        (br_if $rows_done (i32.ge_u (local.get $r) (local.get $rows)))
        (local.set $p (i32.add (local.get $src) (i32.shl (i32.mul (local.get $r) (local.get $cols)) (i32.const 3))))
        (local.set $c (i32.const 0))
        (block $cols_done
          (loop $cl
            (br_if $cols_done (i32.ge_u (local.get $c) (local.get $cols)))
            (f64.store
              (i32.add (local.get $dst)
                (i32.shl (i32.add (i32.mul (local.get $c) (local.get $rows)) (local.get $r)) (i32.const 3)))
              (f64.load (local.get $p)))
            (local.set $p (i32.add (local.get $p) (i32.const 8)))
            (local.set $c (i32.add (local.get $c) (i32.const 1)))
            (br $cl)))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rl))))

  ;; fft2d(re, im, tre, tim, rows, cols, inverse, cosR, sinR, revR, cosC, sinC, revC): fft.ts fft2d in
  ;; place on a rows x cols grid (row-major): every row (cols points, tables cosC/sinC/revC), transpose
  ;; into tre/tim (scratch, rows·cols f64 each), every row of that (rows points, tables cosR/sinR/revR),
  ;; transpose back — fft.ts's steps exactly (a strided column pass thrashed the cache at 256 rows).
  (func (export "fft2d") (param $re i32) (param $im i32) (param $tre i32) (param $tim i32)
    (param $rows i32) (param $cols i32)
    (param $inverse i32) (param $cosR i32) (param $sinR i32) (param $revR i32)
    (param $cosC i32) (param $sinC i32) (param $revC i32)
    (local $r i32) (local $c i32) (local $sgn f64)
    (local.set $sgn (if (result f64) (local.get $inverse) (then (f64.const -1)) (else (f64.const 1))))
    (block $rows_done
      (loop $rl
        (br_if $rows_done (i32.ge_u (local.get $r) (local.get $rows)))
        (call $fft1d (local.get $re) (local.get $im) (i32.mul (local.get $r) (local.get $cols))
          (local.get $cols) (i32.const 1) (local.get $cosC) (local.get $sinC) (local.get $revC) (local.get $sgn))
        (local.set $r (i32.add (local.get $r) (i32.const 1)))
        (br $rl)))
    (call $transpose (local.get $re) (local.get $tre) (local.get $rows) (local.get $cols))
    (call $transpose (local.get $im) (local.get $tim) (local.get $rows) (local.get $cols))
    (block $cols_done
      (loop $cl
        (br_if $cols_done (i32.ge_u (local.get $c) (local.get $cols)))
        (call $fft1d (local.get $tre) (local.get $tim) (i32.mul (local.get $c) (local.get $rows))
          (local.get $rows) (i32.const 1) (local.get $cosR) (local.get $sinR) (local.get $revR) (local.get $sgn))
        (local.set $c (i32.add (local.get $c) (i32.const 1)))
        (br $cl)))
    (call $transpose (local.get $tre) (local.get $re) (local.get $cols) (local.get $rows))
    (call $transpose (local.get $tim) (local.get $im) (local.get $cols) (local.get $rows))))
