! A surrogate layer inside a time loop, as a simulation code calls it: the state x(H, N, T) (the
! library's [1, T, N, H]: Fortran's column-major order is our row-major one) attends to itself
! once per step, x <- x + dt * attention(x, x, x), causal, through one plan made before the loop.
! The same loop in plain Fortran (double precision) checks the result. Host arrays here; device
! arrays go in by address (kattn_set_device, docs/c-fortran.md).
program surrogate_layer
  use, intrinsic :: iso_c_binding
  use kokkosattn
  use plain_attention, only: causal_attention
  implicit none
  integer, parameter :: H = 16, N = 4, T = 64, steps = 10
  real(c_float), parameter :: dt = 0.1
  real(c_float), target :: x(H, N, T, 1), a(H, N, T, 1)
  real(c_double) :: xr(H, N, T), ar(H, N, T)
  type(kattn_problem) :: p
  type(kattn_plan) :: plan
  integer :: step
  real(c_double) :: err

  call random_number(x)
  x = 2 * x - 1
  xr = x(:, :, :, 1)

  call kattn_initialize()
  call kattn_problem_create(p)
  call kattn_set_array(p, KATTN_Q, x)
  call kattn_set_array(p, KATTN_K, x)
  call kattn_set_array(p, KATTN_V, x)
  call kattn_set_array(p, KATTN_OUT, a)
  call kattn_set_causal(p, .true.)
  call kattn_plan_create(plan, p) ! the backend chosen once, outside the loop
  do step = 1, steps
    call kattn_plan_execute(plan, c_loc(x), c_loc(x), c_loc(x), c_loc(a))
    x = x + dt * a
    call causal_attention(xr, xr, xr, ar)
    xr = xr + dt * ar
  end do
  call kattn_plan_destroy(plan)
  call kattn_problem_destroy(p)
  call kattn_finalize()

  ! fp32 against double over 10 steps of |x| <= ~2: a few ulps each; 1e-4 leaves room.
  err = maxval(abs(x(:, :, :, 1) - xr))
  print '(a, i0, a, es10.3)', "surrogate_layer: ", steps, " steps, max |x - reference| = ", err
  if (err > 1e-4) then
    print '(a)', "surrogate_layer: FAILED"
    stop 1
  end if
  print '(a)', "surrogate_layer: OK"
end program
