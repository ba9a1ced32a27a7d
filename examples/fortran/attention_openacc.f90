! Attention on OpenACC-managed arrays: q, k, v live in the accelerator's memory for the whole
! data region, `host_data use_device` hands their device addresses to the library (no copies),
! and the call is enqueued on OpenACC's own CUDA stream. Built with an offloading compiler
! (nvfortran -acc -gpu=cc90, or gfortran with an nvptx offload target) it runs on the GPU; with
! host fallback (plain gfortran -fopenacc: CI) the "device" is the host and so is the memory
! kind. The result is checked against the same attention in plain Fortran (double precision).
program attention_openacc
  use, intrinsic :: iso_c_binding
  use openacc
  use kokkosattn
  use plain_attention, only: causal_attention
  implicit none
  integer, parameter :: H = 32, N = 4, T = 48
  real(c_float), target :: q(H, N, T, 1), k(H, N, T, 1), v(H, N, T, 1), o(H, N, T, 1)
  real(c_double) :: want(H, N, T)
  integer(c_int) :: memory
  type(c_ptr) :: stream
  type(kattn_problem) :: p
  ! The OpenACC C API's stream of an async queue (not every compiler's openacc module has it).
  interface
    type(c_ptr) function cuda_stream_of(async) bind(C, name="acc_get_cuda_stream")
      import :: c_ptr, c_int
      integer(c_int), value :: async
    end function
  end interface

  call random_number(q)
  call random_number(k)
  call random_number(v)
  o = -1
  ! Which memory OpenACC's device pointers are: the library needs to know (CUDA here; an AMD
  ! offload compiler would give acc_device_radeon and KATTN_MEMORY_HIP).
  if (acc_get_device_type() == acc_device_nvidia) then
    memory = KATTN_MEMORY_CUDA
    stream = cuda_stream_of(int(acc_async_sync, c_int))
  else
    memory = KATTN_MEMORY_HOST
    stream = c_null_ptr
  end if

  call kattn_initialize()
  call kattn_problem_create(p)
  !$acc data copyin(q, k, v) copyout(o)
  !$acc host_data use_device(q, k, v, o)
  call kattn_set_device(p, KATTN_Q, c_loc(q), KATTN_F32, shape(q, kind=c_int64_t), memory)
  call kattn_set_device(p, KATTN_K, c_loc(k), KATTN_F32, shape(k, kind=c_int64_t), memory)
  call kattn_set_device(p, KATTN_V, c_loc(v), KATTN_F32, shape(v, kind=c_int64_t), memory)
  call kattn_set_device(p, KATTN_OUT, c_loc(o), KATTN_F32, shape(o, kind=c_int64_t), memory)
  !$acc end host_data
  call kattn_set_causal(p, .true.)
  call kattn_forward(p, stream)
  !$acc wait
  !$acc end data
  call kattn_problem_destroy(p)
  call kattn_finalize()

  call causal_attention(real(q(:, :, :, 1), c_double), real(k(:, :, :, 1), c_double), &
                 real(v(:, :, :, 1), c_double), want)
  ! fp32 against double, softmax weights over <= 48 keys of values in [0, 1): 1e-5 is ~100 ulps.
  print '(a, l1, a, es10.3)', "attention_openacc: on the accelerator: ", &
    memory /= KATTN_MEMORY_HOST, ", max |out - reference| = ", maxval(abs(o(:, :, :, 1) - want))
  if (maxval(abs(o(:, :, :, 1) - want)) > 1e-5) then
    print '(a)', "attention_openacc: FAILED"
    stop 1
  end if
  print '(a)', "attention_openacc: OK"
end program
