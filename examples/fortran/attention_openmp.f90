! Attention on OpenMP-mapped arrays: q, k, v live in the offload device's memory for the whole
! target data region, `use_device_addr` hands their device addresses to the library (no copies),
! and kattn_synchronize waits for the call before the region copies out back (OpenMP's own
! transfers run on streams of its runtime: without `interop` there is no stream to share).
! Built with an offloading compiler (nvfortran -mp=gpu, or gfortran/flang with an offload target)
! it runs on the GPU; without offloading (plain gfortran -fopenmp: CI) the target is the host and
! so is the memory kind. The result is checked against the same attention in plain Fortran.
program attention_openmp
  use, intrinsic :: iso_c_binding
  use omp_lib
  use kokkosattn
  use plain_attention, only: causal_attention
  implicit none
  integer, parameter :: H = 32, N = 4, T = 48
  real(c_float), target :: q(H, N, T, 1), k(H, N, T, 1), v(H, N, T, 1), o(H, N, T, 1)
  real(c_double) :: want(H, N, T)
  integer(c_int) :: memory
  logical :: on_host
  type(kattn_problem) :: p

  call random_number(q)
  call random_number(k)
  call random_number(v)
  o = -1
  ! Where target regions run: the memory kind the library needs. An NVIDIA offload compiler gives
  ! CUDA memory; for an AMD one, KATTN_MEMORY_HIP.
  on_host = .true.
  !$omp target map(from: on_host)
  on_host = omp_is_initial_device()
  !$omp end target
  memory = merge(KATTN_MEMORY_HOST, KATTN_MEMORY_CUDA, on_host)

  call kattn_initialize()
  call kattn_problem_create(p)
  !$omp target data map(to: q, k, v) map(from: o)
  !$omp target data use_device_addr(q, k, v, o)
  call kattn_set_device(p, KATTN_Q, c_loc(q), KATTN_F32, shape(q, kind=c_int64_t), memory)
  call kattn_set_device(p, KATTN_K, c_loc(k), KATTN_F32, shape(k, kind=c_int64_t), memory)
  call kattn_set_device(p, KATTN_V, c_loc(v), KATTN_F32, shape(v, kind=c_int64_t), memory)
  call kattn_set_device(p, KATTN_OUT, c_loc(o), KATTN_F32, shape(o, kind=c_int64_t), memory)
  !$omp end target data
  call kattn_set_causal(p, .true.)
  call kattn_forward(p)
  call kattn_synchronize(memory)
  !$omp end target data
  call kattn_problem_destroy(p)
  call kattn_finalize()

  call causal_attention(real(q(:, :, :, 1), c_double), real(k(:, :, :, 1), c_double), &
                        real(v(:, :, :, 1), c_double), want)
  ! fp32 against double, softmax weights over <= 48 keys of values in [0, 1): 1e-5 is ~100 ulps.
  print '(a, l1, a, es10.3)', "attention_openmp: on the offload device: ", .not. on_host, &
    ", max |out - reference| = ", maxval(abs(o(:, :, :, 1) - want))
  if (maxval(abs(o(:, :, :, 1) - want)) > 1e-5) then
    print '(a)', "attention_openmp: FAILED"
    stop 1
  end if
  print '(a)', "attention_openmp: OK"
end program
