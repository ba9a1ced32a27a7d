! The Fortran module (fortran/kokkosattn.f90) on host arrays: arrays declared (H, N, T, B) are the
! library's [B, T, N, H]; results against attention computed here in double precision, causal
! and not, every host backend, real32 and bf16 storage; bad input answered through stat/errmsg
! with out untouched; a non-contiguous section refused; a plan on new arrays.
program test_fortran
  use, intrinsic :: iso_c_binding
  use kokkosattn
  implicit none
  integer, parameter :: B = 2, T = 11, S = 11, N = 2, H = 8
  real(c_float), target :: q(H, N, T, B), k(H, N, S, B), v(H, N, S, B), o(H, N, T, B)
  real(c_float), target :: q2(H, N, T, B), o2(H, N, T, B), bad(H + 1, N, T, B)
  real(c_float), target :: wide(2 * H, N, T, B)
  integer(c_int16_t), target :: q16(H, N, T, B), k16(H, N, S, B), v16(H, N, S, B), o16(H, N, T, B)
  real(c_double) :: want(H, N, T, B)
  type(kattn_problem) :: p, p16
  type(kattn_plan) :: plan
  integer :: causal, i, stat
  character(len=512) :: msg
  integer(c_int), parameter :: backends(4) = [KATTN_BACKEND_AUTO, KATTN_BACKEND_REFERENCE, &
                                             KATTN_BACKEND_NAIVE, KATTN_BACKEND_PORTABLE]
  real(c_float), parameter :: poison = -12345.0
  integer :: failures = 0
  character(len=:), allocatable :: text

  call random_number(q)
  call random_number(k)
  call random_number(v)
  call random_number(q2)
  q = 2 * q - 1
  k = 2 * k - 1
  v = 2 * v - 1
  bad = 0
  wide = 0

  call kattn_initialize()
  call kattn_problem_create(p)
  call kattn_set_array(p, KATTN_Q, q)
  call kattn_set_array(p, KATTN_K, k)
  call kattn_set_array(p, KATTN_V, v)
  call kattn_set_array(p, KATTN_OUT, o)

  do causal = 0, 1
    call expected(q, k, v, causal == 1, want)
    call kattn_set_causal(p, causal == 1)
    do i = 1, size(backends)
      call kattn_set_backend(p, backends(i))
      o = poison
      call kattn_forward(p)
      ! fp32 accumulation over S = 11 keys of |q.k| <= 8: a few ulps of 1; 1e-5 leaves room.
      call check(maxval(abs(o - want)) <= 1e-5, "result of a backend")
    end do
  end do
  call kattn_set_backend(p, KATTN_BACKEND_AUTO)

  ! TF32 is a permission the host backends do not use: the same fp32 result with it.
  call kattn_set_allow_tf32(p, .true.)
  o = poison
  call kattn_forward(p)
  call check(maxval(abs(o - want)) <= 1e-5, "result with allow_tf32")
  call kattn_set_allow_tf32(p, .false.)

  text = kattn_explain(p)
  call check(index(text, "portable") > 0 .and. index(text, "reference") > 0, "explain")
  call check(len(kattn_version()) > 0, "version")
  call check(kattn_selected_backend(p) /= KATTN_BACKEND_AUTO, "selected backend")

  ! Bad input: q's head dim disagrees with k's. stat and errmsg, out untouched.
  call kattn_set_array(p, KATTN_Q, bad)
  o = poison
  msg = ""
  call kattn_forward(p, stat=stat, errmsg=msg)
  call check(stat == KATTN_ERROR_INVALID_ARGUMENT, "bad q refused")
  call check(index(msg, "q") > 0 .and. msg == kattn_last_error(), "errmsg names q")
  call check(all(o == poison), "out untouched")
  call kattn_set_array(p, KATTN_Q, q)
  call kattn_set_backend(p, 99_c_int, stat=stat)
  call check(stat == KATTN_ERROR_INVALID_ARGUMENT, "unknown backend refused")
  ! A non-contiguous section is refused, never copied in.
  msg = ""
  call kattn_set_array(p, KATTN_Q, wide(1:2 * H:2, :, :, :), stat=stat, errmsg=msg)
  call check(stat == KATTN_ERROR_INVALID_ARGUMENT .and. index(msg, "contiguous") > 0, &
             "non-contiguous section refused")
  call kattn_forward(p, stat=stat)
  call check(stat == KATTN_OK, "q unchanged by the refused section")

  ! A plan (causal from the loop above), run on other arrays.
  call kattn_plan_create(plan, p)
  call check(kattn_plan_backend(plan) /= KATTN_BACKEND_AUTO, "plan backend")
  call expected(q2, k, v, .true., want)
  o2 = poison
  call kattn_plan_execute(plan, c_loc(q2), c_loc(k), c_loc(v), c_loc(o2))
  call check(maxval(abs(o2 - want)) <= 1e-5, "plan result")
  call kattn_plan_destroy(plan)

  ! bf16 storage (integer(c_int16_t) bits) on the reference: against the double result of the
  ! bf16-rounded inputs; the output's rounding (2^-9 relative, |out| < 1) dominates: 4e-3.
  q16 = to_bf16(q)
  k16 = to_bf16(k)
  v16 = to_bf16(v)
  call kattn_problem_create(p16)
  call kattn_set_array(p16, KATTN_Q, q16, KATTN_BF16)
  call kattn_set_array(p16, KATTN_K, k16, KATTN_BF16)
  call kattn_set_array(p16, KATTN_V, v16, KATTN_BF16)
  call kattn_set_array(p16, KATTN_OUT, o16, KATTN_BF16)
  call kattn_set_backend(p16, KATTN_BACKEND_REFERENCE)
  call kattn_forward(p16)
  call expected(from_bf16(q16), from_bf16(k16), from_bf16(v16), .false., want)
  call check(maxval(abs(from_bf16(o16) - want)) <= 4e-3, "bf16 result")
  call kattn_problem_destroy(p16)

  call kattn_problem_destroy(p)
  call kattn_finalize()
  if (failures > 0) then
    print '(a, i0, a)', "test_fortran: ", failures, " failure(s)"
    error stop 1
  end if
  print '(a)', "test_fortran: all checks passed"

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      print '(a, a, a, a)', "FAILED: ", what, "; last error: ", kattn_last_error()
    end if
  end subroutine

  ! bf16 bits of x (round to nearest even), and back.
  elemental integer(c_int16_t) function to_bf16(x)
    real(c_float), intent(in) :: x
    integer(c_int32_t) :: bits
    bits = transfer(x, bits)
    bits = bits + 32767 + iand(ishft(bits, -16), 1)
    to_bf16 = int(ishft(bits, -16), c_int16_t)
  end function

  elemental real(c_float) function from_bf16(h)
    integer(c_int16_t), intent(in) :: h
    from_bf16 = transfer(ishft(iand(int(h, c_int32_t), 65535), 16), from_bf16)
  end function

  ! softmax(q k^T / sqrt(H)) v per (b, n, t) in double; causal: keys s <= t (T = S).
  subroutine expected(qq, kk, vv, is_causal, res)
    real(c_float), intent(in) :: qq(H, N, T, B), kk(H, N, S, B), vv(H, N, S, B)
    logical, intent(in) :: is_causal
    real(c_double), intent(out) :: res(H, N, T, B)
    real(c_double) :: w(S)
    integer :: bb, nn, tt, ss
    do bb = 1, B
      do nn = 1, N
        do tt = 1, T
          do ss = 1, S
            w(ss) = dot_product(real(qq(:, nn, tt, bb), c_double), &
                                real(kk(:, nn, ss, bb), c_double)) / sqrt(real(H, c_double))
            if (is_causal .and. ss > tt) w(ss) = -huge(1.0_c_double)
          end do
          w = exp(w - maxval(w))
          w = w / sum(w)
          res(:, nn, tt, bb) = matmul(real(vv(:, nn, :, bb), c_double), w)
        end do
      end do
    end do
  end subroutine

end program test_fortran
