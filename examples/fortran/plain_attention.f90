! The examples' check: causal self-attention in plain Fortran, double precision, one head at a
! time, scale 1/sqrt(H). Arrays (H, N, T): the library's [1, T, N, H].
module plain_attention
  use, intrinsic :: iso_c_binding, only: c_double
  implicit none
  private
  public :: causal_attention

contains

  subroutine causal_attention(q, k, v, out)
    real(c_double), intent(in) :: q(:, :, :), k(:, :, :), v(:, :, :)
    real(c_double), intent(out) :: out(:, :, :)
    real(c_double) :: w(size(q, 3))
    integer :: head, i, j ! (Fortran names are case-blind: not n)
    do head = 1, size(q, 2)
      do i = 1, size(q, 3)
        do j = 1, i
          w(j) = dot_product(q(:, head, i), k(:, head, j)) / sqrt(real(size(q, 1), c_double))
        end do
        w(1:i) = exp(w(1:i) - maxval(w(1:i)))
        w(1:i) = w(1:i) / sum(w(1:i))
        out(:, head, i) = 0
        do j = 1, i
          out(:, head, i) = out(:, head, i) + w(j) * v(:, head, j)
        end do
      end do
    end do
  end subroutine
end module
