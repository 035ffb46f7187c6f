;; The polyphase FIR's inner loop (audio/polyphase.ts, audio/halfband.ts): four taps per SIMD
;; multiply, eight per step into two accumulators.
;; Built to fir.wasm next to the compiled audio/fir-kernel.js by scripts/build-assets.mjs.
;;
;; fir(tapsPtr, taps, up, adv, rem, inPtr, s, p, count, outPtr): output n (n < count) is the dot
;; product of the `taps` f32 taps of phase p (at tapsPtr + 4·p·taps) with the f32 input from
;; index s (at inPtr + 4·s); then p += rem and s += adv, plus one more input when p reaches up.
;; `taps` is a multiple of 4. Memory is the caller's: it places taps, input and output.
;;
;; interleave_s16(evenPtr, oddPtr, count, outPtr): the 16-bit pairs (even[i], odd[i]) for
;; i < count, each f32 sample rounded as audio/pcm's sampleToInt16 does it (× 32767 in f64,
;; round half up, clipped to ±32767, NaN to 0), so the bytes equal the JavaScript path's. Works
;; four pairs a step: the caller leaves 16 bytes of room after both inputs and the output.
(module
  (memory (export "memory") 1)
  (func (export "fir")
    (param $tapsPtr i32) (param $taps i32) (param $up i32) (param $adv i32) (param $rem i32)
    (param $inPtr i32) (param $s i32) (param $p i32) (param $count i32) (param $outPtr i32)
    (local $n i32) (local $k i32) (local $acc v128) (local $acc2 v128) (local $x i32) (local $t i32) (local $pairs i32)
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $n) (local.get $count)))
        (local.set $acc (v128.const f32x4 0 0 0 0))
        (local.set $acc2 (v128.const f32x4 0 0 0 0))
        (local.set $x (i32.add (local.get $inPtr) (i32.shl (local.get $s) (i32.const 2))))
        (local.set $t (i32.add (local.get $tapsPtr) (i32.shl (i32.mul (local.get $p) (local.get $taps)) (i32.const 2))))
        (local.set $k (i32.const 0))
        ;; Eight taps a step into two accumulators, so one addition need not wait for the last.
        (local.set $pairs (i32.and (local.get $taps) (i32.const -8)))
        (block $pairsDone
          (br_if $pairsDone (i32.eqz (local.get $pairs)))
          (loop $dot
            (local.set $acc
              (f32x4.add (local.get $acc) (f32x4.mul (v128.load align=4 (local.get $x)) (v128.load align=4 (local.get $t)))))
            (local.set $acc2
              (f32x4.add (local.get $acc2) (f32x4.mul (v128.load offset=16 align=4 (local.get $x)) (v128.load offset=16 align=4 (local.get $t)))))
            (local.set $x (i32.add (local.get $x) (i32.const 32)))
            (local.set $t (i32.add (local.get $t) (i32.const 32)))
            (local.set $k (i32.add (local.get $k) (i32.const 8)))
            (br_if $dot (i32.lt_u (local.get $k) (local.get $pairs)))))
        ;; The last four taps when `taps` is not a multiple of eight.
        (if (i32.lt_u (local.get $k) (local.get $taps))
          (then
            (local.set $acc
              (f32x4.add (local.get $acc) (f32x4.mul (v128.load align=4 (local.get $x)) (v128.load align=4 (local.get $t)))))))
        (local.set $acc (f32x4.add (local.get $acc) (local.get $acc2)))
        (f32.store
          (i32.add (local.get $outPtr) (i32.shl (local.get $n) (i32.const 2)))
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.get $acc)) (f32x4.extract_lane 1 (local.get $acc)))
            (f32.add (f32x4.extract_lane 2 (local.get $acc)) (f32x4.extract_lane 3 (local.get $acc)))))
        (local.set $s (i32.add (local.get $s) (local.get $adv)))
        (local.set $p (i32.add (local.get $p) (local.get $rem)))
        (if (i32.ge_u (local.get $p) (local.get $up))
          (then
            (local.set $p (i32.sub (local.get $p) (local.get $up)))
            (local.set $s (i32.add (local.get $s) (i32.const 1)))))
        (local.set $n (i32.add (local.get $n) (i32.const 1)))
        (br $each))))
  (func (export "interleave_s16") (param $evenPtr i32) (param $oddPtr i32) (param $count i32) (param $outPtr i32)
    (local $i i32) (local $v v128) (local $e v128) (local $o v128)
    (local $scale v128) (local $half v128) (local $lo v128) (local $hi v128)
    (local.set $scale (v128.const f64x2 32767 32767))
    (local.set $half (v128.const f64x2 0.5 0.5))
    (local.set $lo (v128.const f64x2 -32767 -32767))
    (local.set $hi (v128.const f64x2 32767 32767))
    (block $done
      (loop $each
        (br_if $done (i32.ge_u (local.get $i) (local.get $count)))
        ;; Each lane: floor(x · 32767 + 0.5) in f64, clipped to ±32767; NaN stays NaN and truncates to 0.
        ;; Written out four times: V8 does not inline wasm calls, and a call per four samples cost 40 %.
        (local.set $v (v128.load align=4 (local.get $evenPtr)))
        (local.set $e
          (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23
            (i32x4.trunc_sat_f64x2_s_zero
                (f64x2.min (local.get $hi) (f64x2.max (local.get $lo)
                  (f64x2.floor (f64x2.add (local.get $half) (f64x2.mul (local.get $scale) (f64x2.promote_low_f32x4 (local.get $v))))))))
            (i32x4.trunc_sat_f64x2_s_zero
                (f64x2.min (local.get $hi) (f64x2.max (local.get $lo)
                  (f64x2.floor (f64x2.add (local.get $half) (f64x2.mul (local.get $scale) (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v)))))))))))
        (local.set $v (v128.load align=4 (local.get $oddPtr)))
        (local.set $o
          (i8x16.shuffle 0 1 2 3 4 5 6 7 16 17 18 19 20 21 22 23
            (i32x4.trunc_sat_f64x2_s_zero
                (f64x2.min (local.get $hi) (f64x2.max (local.get $lo)
                  (f64x2.floor (f64x2.add (local.get $half) (f64x2.mul (local.get $scale) (f64x2.promote_low_f32x4 (local.get $v))))))))
            (i32x4.trunc_sat_f64x2_s_zero
                (f64x2.min (local.get $hi) (f64x2.max (local.get $lo)
                  (f64x2.floor (f64x2.add (local.get $half) (f64x2.mul (local.get $scale) (f64x2.promote_low_f32x4 (i8x16.shuffle 8 9 10 11 12 13 14 15 0 1 2 3 4 5 6 7 (local.get $v) (local.get $v)))))))))))
        ;; Narrowed side by side (e0 e1 e2 e3 o0 o1 o2 o3), then shuffled into pairs.
        (v128.store align=2 (local.get $outPtr)
          (i8x16.shuffle 0 1 8 9 2 3 10 11 4 5 12 13 6 7 14 15
            (i16x8.narrow_i32x4_s (local.get $e) (local.get $o))
            (local.get $e)))
        (local.set $evenPtr (i32.add (local.get $evenPtr) (i32.const 16)))
        (local.set $oddPtr (i32.add (local.get $oddPtr) (i32.const 16)))
        (local.set $outPtr (i32.add (local.get $outPtr) (i32.const 16)))
        (local.set $i (i32.add (local.get $i) (i32.const 4)))
        (br $each)))))
