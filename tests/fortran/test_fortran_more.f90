! The Fortran module on the rest of what simulation codes call (host arrays, f32): GQA (two
! query heads per key/value head), packed varlen (two sequences in one token dimension, rank-3
! arrays (H, heads, tokens) and int32 offsets), and the backward: dq against central finite
! differences of sum(dout * out) computed here in double, the portable backend's dq, dk, dv
! against the reference backend's, and a decode step's kattn_append_kv into a KV cache.
program test_fortran_more
  use, intrinsic :: iso_c_binding
  use kokkosattn
  implicit none
  integer, parameter :: H = 8, N = 4, KV = 2, T = 9, L1 = 5, L2 = 6
  real(c_float), target :: q(H, N, T, 1), k(H, KV, T, 1), v(H, KV, T, 1), o(H, N, T, 1)
  real(c_float), target :: pq(H, N, L1 + L2), pk(H, KV, L1 + L2), pv(H, KV, L1 + L2)
  real(c_float), target :: po(H, N, L1 + L2)
  real(c_float), target :: dout(H, N, T, 1), dq(H, N, T, 1), dk(H, KV, T, 1), dv(H, KV, T, 1)
  real(c_float), target :: dq2(H, N, T, 1), dk2(H, KV, T, 1), dv2(H, KV, T, 1)
  real(c_float), target :: kc(H, KV, T, 1), vc(H, KV, T, 1), kn(H, KV, 1, 1), vn(H, KV, 1, 1)
  integer(c_int32_t), target :: held(1)
  integer(c_int32_t), target :: cu(3) = [0, L1, L1 + L2]
  real(c_double) :: want(H, N, T), pwant(H, N, L1 + L2)
  type(kattn_problem) :: p
  type(kattn_plan) :: plan
  real(c_float), parameter :: poison = -12345.0
  real(c_float), parameter :: eps = 2.0**(-6)
  integer :: failures = 0, i, idx(3, 3)
  real(c_double) :: fd
  real(c_float) :: keep

  call random_number(q)
  call random_number(k)
  call random_number(v)
  call random_number(dout)
  q = 2 * q - 1
  k = 2 * k - 1
  v = 2 * v - 1
  dout = 2 * dout - 1
  call random_number(pq)
  call random_number(pk)
  call random_number(pv)
  pq = 2 * pq - 1
  pk = 2 * pk - 1
  pv = 2 * pv - 1
  call kattn_initialize()

  ! GQA: query head n reads KV head (n - 1) / (N / KV) + 1.
  call kattn_problem_create(p)
  call kattn_set_array(p, KATTN_Q, q)
  call kattn_set_array(p, KATTN_K, k)
  call kattn_set_array(p, KATTN_V, v)
  call kattn_set_array(p, KATTN_OUT, o)
  o = poison
  call kattn_forward(p)
  call attention(q(:, :, :, 1), k(:, :, :, 1), v(:, :, :, 1), T, T, want)
  ! fp32 accumulation over 9 keys of |q.k| <= 8: a few ulps of 1; 1e-5 leaves room.
  call check(maxval(abs(o(:, :, :, 1) - want)) <= 1e-5, "GQA forward")

  ! Backward (reference backend): dq against finite differences of sum(dout * out).
  call kattn_set_array(p, KATTN_DOUT, dout)
  call kattn_set_array(p, KATTN_DQ, dq)
  call kattn_set_array(p, KATTN_DK, dk)
  call kattn_set_array(p, KATTN_DV, dv)
  call kattn_set_backend(p, KATTN_BACKEND_REFERENCE)
  dq = poison
  dk = poison
  dv = poison
  call kattn_backward(p)
  call check(all(dq /= poison) .and. all(dk /= poison) .and. all(dv /= poison), "gradients written")
  idx = reshape([1, 1, 1, 5, 3, 4, 8, 4, 9], [3, 3])
  do i = 1, 3
    keep = q(idx(1, i), idx(2, i), idx(3, i), 1)
    q(idx(1, i), idx(2, i), idx(3, i), 1) = keep + eps
    fd = loss(q)
    q(idx(1, i), idx(2, i), idx(3, i), 1) = keep - eps
    fd = (fd - loss(q)) / (2 * real(eps, c_double))
    q(idx(1, i), idx(2, i), idx(3, i), 1) = keep
    ! Central differences: O(eps^2) ~ 2e-4 times the third derivative, plus fp32 gradients.
    call check(abs(dq(idx(1, i), idx(2, i), idx(3, i), 1) - fd) <= 2e-3, "dq vs finite differences")
  end do
  ! The portable backend's gradients agree with the reference's.
  call kattn_set_array(p, KATTN_DQ, dq2)
  call kattn_set_array(p, KATTN_DK, dk2)
  call kattn_set_array(p, KATTN_DV, dv2)
  call kattn_set_backend(p, KATTN_BACKEND_PORTABLE)
  call kattn_backward(p)
  call check(maxval(abs(dq2 - dq)) <= 1e-4 .and. maxval(abs(dk2 - dk)) <= 1e-4 .and. &
             maxval(abs(dv2 - dv)) <= 1e-4, "portable gradients = reference gradients")
  ! A backward plan (portable, as planned) into dq, dk, dv: bitwise the call's gradients.
  call kattn_plan_create_backward(plan, p)
  dq = poison
  dk = poison
  dv = poison
  call kattn_plan_execute_backward(plan, c_loc(q), c_loc(k), c_loc(v), c_loc(o), c_loc(dout), &
                                   c_loc(dq), c_loc(dk), c_loc(dv))
  call check(all(dq == dq2) .and. all(dk == dk2) .and. all(dv == dv2), "backward plan")
  call kattn_plan_destroy(plan)
  call kattn_problem_destroy(p)

  ! Packed varlen: sequences of 5 and 6 tokens, each attending to its own keys only.
  call kattn_problem_create(p)
  call kattn_set_array(p, KATTN_Q, pq)
  call kattn_set_array(p, KATTN_K, pk)
  call kattn_set_array(p, KATTN_V, pv)
  call kattn_set_array(p, KATTN_OUT, po)
  call kattn_set_array(p, KATTN_CU_SEQLENS_Q, cu)
  call kattn_set_array(p, KATTN_CU_SEQLENS_K, cu)
  call kattn_set_max_seqlens(p, int(L2, c_int64_t), int(L2, c_int64_t))
  po = poison
  call kattn_forward(p)
  call attention(pq(:, :, 1:L1), pk(:, :, 1:L1), pv(:, :, 1:L1), L1, L1, pwant(:, :, 1:L1))
  call attention(pq(:, :, L1 + 1:), pk(:, :, L1 + 1:), pv(:, :, L1 + 1:), L2, L2, &
                 pwant(:, :, L1 + 1:))
  call check(maxval(abs(po - pwant)) <= 1e-5, "packed varlen forward")
  call kattn_problem_destroy(p)

  ! A decode step: the cache holds T - 1 keys (the last poisoned), kattn_append_kv writes key T
  ! from KATTN_K_NEW / KATTN_V_NEW and grows seqlens_k; the forward then matches the full one.
  kc = k
  vc = v
  kc(:, :, T, 1) = poison
  vc(:, :, T, 1) = poison
  kn(:, :, 1, 1) = k(:, :, T, 1)
  vn(:, :, 1, 1) = v(:, :, T, 1)
  held = T - 1
  call kattn_problem_create(p)
  call kattn_set_array(p, KATTN_Q, q)
  call kattn_set_array(p, KATTN_K, kc)
  call kattn_set_array(p, KATTN_V, vc)
  call kattn_set_array(p, KATTN_OUT, o)
  call kattn_set_array(p, KATTN_SEQLENS_K, held)
  call kattn_set_array(p, KATTN_K_NEW, kn)
  call kattn_set_array(p, KATTN_V_NEW, vn)
  call kattn_append_kv(p)
  call check(held(1) == T .and. all(kc == k) .and. all(vc == v), "append_kv into the cache")
  o = poison
  call kattn_forward(p)
  call attention(q(:, :, :, 1), k(:, :, :, 1), v(:, :, :, 1), T, T, want)
  call check(maxval(abs(o(:, :, :, 1) - want)) <= 1e-5, "forward after append_kv")
  call kattn_problem_destroy(p)

  call kattn_finalize()
  if (failures > 0) then
    print '(a, i0, a)', "test_fortran_more: ", failures, " failure(s)"
    error stop 1
  end if
  print '(a)', "test_fortran_more: all checks passed"

contains

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      failures = failures + 1
      print '(a, a, a, a)', "FAILED: ", what, "; last error: ", kattn_last_error()
    end if
  end subroutine

  ! softmax(q k^T / sqrt(H)) v in double for one sequence, GQA over KV heads.
  subroutine attention(qq, kk, vv, nq, nk, res)
    integer, intent(in) :: nq, nk
    real(c_float), intent(in) :: qq(H, N, nq), kk(H, KV, nk), vv(H, KV, nk)
    real(c_double), intent(out) :: res(H, N, nq)
    real(c_double) :: w(nk)
    integer :: head, g, i, j
    do head = 1, N
      g = (head - 1) / (N / KV) + 1
      do i = 1, nq
        do j = 1, nk
          w(j) = dot_product(real(qq(:, head, i), c_double), real(kk(:, g, j), c_double)) / &
                 sqrt(real(H, c_double))
        end do
        w = exp(w - maxval(w))
        w = w / sum(w)
        res(:, head, i) = matmul(real(vv(:, g, :), c_double), w)
      end do
    end do
  end subroutine

  ! sum(dout * out) for queries qq (the GQA problem above), in double.
  real(c_double) function loss(qq)
    real(c_float), intent(in) :: qq(H, N, T, 1)
    real(c_double) :: r(H, N, T)
    call attention(qq(:, :, :, 1), k(:, :, :, 1), v(:, :, :, 1), T, T, r)
    loss = sum(real(dout(:, :, :, 1), c_double) * r)
  end function

end program test_fortran_more
