#include <immintrin.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <time.h>
#define ARCH_REQ_XCOMP_PERM 0x1023
#define XFEATURE_XTILEDATA 18
typedef struct { uint8_t palette, start; uint8_t res[14]; uint16_t colsb[16]; uint8_t rows[16]; } __attribute__((packed)) Cfg;
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  long r = syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA);
  printf("perm %ld\n", r);
  int crows = argc>1? atoi(argv[1]):16;
  Cfg c; memset(&c,0,sizeof c); c.palette=1;
  for(int t=0;t<4;t++){c.rows[t]=crows;c.colsb[t]=64;}  // C tiles 0..3
  c.rows[4]=crows; c.colsb[4]=64; c.rows[5]=crows; c.colsb[5]=64; // A
  c.rows[6]=16; c.colsb[6]=64; c.rows[7]=16; c.colsb[7]=64; // B
  _tile_loadconfig(&c);
  static uint16_t a[16*32] __attribute__((aligned(64))), b[16*32] __attribute__((aligned(64)));
  static float out[256] __attribute__((aligned(64)));
  for(int i=0;i<512;i++){a[i]=0x3f80; b[i]=0x3f80;}
  _tile_zero(0);_tile_zero(1);_tile_zero(2);_tile_zero(3);
  _tile_loadd(4,a,64);_tile_loadd(5,a,64);_tile_loadd(6,b,64);_tile_loadd(7,b,64);
  long N=2000000; double t0=now();
  for(long i=0;i<N;i++){
    _tile_dpbf16ps(0,4,6);_tile_dpbf16ps(1,4,7);_tile_dpbf16ps(2,5,6);_tile_dpbf16ps(3,5,7);
  }
  double t=now()-t0;
  _tile_stored(0,out,64);
  printf("rows %d: %.2f ns per tdp, %.1f GFMA/s (useful rows), out %f\n", crows, t/(4.0*N)*1e9, 4.0*N*crows*16*32/t*1e-9, out[0]);
  // loads throughput
  t0=now();
  for(long i=0;i<N;i++){ _tile_loadd(4,a,64);_tile_loadd(5,a,64);_tile_loadd(6,b,64);_tile_loadd(7,b,64);
    _tile_dpbf16ps(0,4,6);_tile_dpbf16ps(1,4,7);_tile_dpbf16ps(2,5,6);_tile_dpbf16ps(3,5,7);}
  t=now()-t0;
  printf("with 4 loads per 4 tdp: %.2f ns per tdp\n", t/(4.0*N)*1e9);
  _tile_release();
  return 0;
}
