! Attention on CUDA Fortran `device` arrays: q, k, v, out allocated in GPU memory by the Fortran
! compiler, their device addresses (c_devloc) and a CUDA stream handed to the library, no copies
! beyond the program's own. Needs a CUDA Fortran compiler (nvfortran -cuda): CMake builds it only
! with NVHPC's Fortran. NOT COMPILED OR RUN by this project's CI or on its GPU machine, which have
! no CUDA Fortran compiler (gfortran has no `device` attribute; the OpenACC and OpenMP examples
! beside this one run on the H200). The result is checked against plain Fortran.
program attention_cuda_fortran
  use, intrinsic :: iso_c_binding
  use cudafor
  use kokkosattn
  use plain_attention, only: causal_attention
  implicit none
  integer, parameter :: H = 32, N = 4, T = 48
  real(c_float) :: q(H, N, T, 1), k(H, N, T, 1), v(H, N, T, 1), o(H, N, T, 1)
  real(c_float), device :: q_d(H, N, T, 1), k_d(H, N, T, 1), v_d(H, N, T, 1), o_d(H, N, T, 1)
  real(c_double) :: want(H, N, T)
  integer(kind=cuda_stream_kind) :: stream
  type(kattn_problem) :: p
  integer :: istat

  call random_number(q)
  call random_number(k)
  call random_number(v)
  q_d = q
  k_d = k
  v_d = v
  o_d = -1
  istat = cudaStreamCreate(stream)
  if (istat /= cudaSuccess) error stop "cudaStreamCreate failed"

  call kattn_initialize()
  call kattn_problem_create(p)
  ! c_devloc gives a type(c_devptr), which holds the device address as a c_ptr.
  call kattn_set_device(p, KATTN_Q, transfer(c_devloc(q_d), c_null_ptr), KATTN_F32, &
                        shape(q, kind=c_int64_t), KATTN_MEMORY_CUDA)
  call kattn_set_device(p, KATTN_K, transfer(c_devloc(k_d), c_null_ptr), KATTN_F32, &
                        shape(k, kind=c_int64_t), KATTN_MEMORY_CUDA)
  call kattn_set_device(p, KATTN_V, transfer(c_devloc(v_d), c_null_ptr), KATTN_F32, &
                        shape(v, kind=c_int64_t), KATTN_MEMORY_CUDA)
  call kattn_set_device(p, KATTN_OUT, transfer(c_devloc(o_d), c_null_ptr), KATTN_F32, &
                        shape(o, kind=c_int64_t), KATTN_MEMORY_CUDA)
  call kattn_set_causal(p, .true.)
  ! The stream handle (cudaStream_t) as the library's void* stream.
  call kattn_forward(p, transfer(stream, c_null_ptr))
  istat = cudaStreamSynchronize(stream)
  if (istat /= cudaSuccess) error stop "cudaStreamSynchronize failed"
  o = o_d
  call kattn_problem_destroy(p)
  call kattn_finalize()
  istat = cudaStreamDestroy(stream)

  call causal_attention(real(q(:, :, :, 1), c_double), real(k(:, :, :, 1), c_double), &
                        real(v(:, :, :, 1), c_double), want)
  ! fp32 against double, softmax weights over <= 48 keys of values in [0, 1): 1e-5 is ~100 ulps.
  print '(a, es10.3)', "attention_cuda_fortran: max |out - reference| = ", &
    maxval(abs(o(:, :, :, 1) - want))
  if (maxval(abs(o(:, :, :, 1) - want)) > 1e-5) then
    print '(a)', "attention_cuda_fortran: FAILED"
    stop 1
  end if
  print '(a)', "attention_cuda_fortran: OK"
end program
